#include "core/frontend/torchscript/fold_attributes.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/alias_analysis.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

#include <utility>
#include <vector>

namespace brisk {
namespace jit = torch::jit;

namespace {

bool hasSetAttr(const jit::Block* b) {
  for (const jit::Node* n : b->nodes()) {
    if (n->kind() == c10::prim::SetAttr) return true;
    for (const jit::Block* sub : n->blocks())
      if (hasSetAttr(sub)) return true;
  }
  return false;
}

struct Fold {
  jit::Node* get_attr;
  c10::IValue value;
};

// Collects, for every prim::GetAttr reached from `obj_value` (holding `obj`), either a
// deeper walk (module-typed result) or a fold. False when a use cannot be folded.
bool collect(jit::Value* obj_value, const c10::IValue& obj, jit::AliasDb& db, std::vector<Fold>& folds,
             std::vector<jit::Node*>& object_reads) {
  for (const jit::Use& use : obj_value->uses()) {
    jit::Node* n = use.user;
    if (n->kind() != c10::prim::GetAttr || !obj.isObject()) return false;
    const auto& object = obj.toObjectRef();
    const std::string& name = n->s(c10::attr::name);
    if (!object.type()->hasAttribute(name)) return false;
    c10::IValue attr = object.getAttr(name);
    if (attr.isObject()) {
      object_reads.push_back(n);
      if (!collect(n->output(), attr, db, folds, object_reads)) return false;
      continue;
    }
    if (db.hasWriters(n->output())) return false;
    // A parameter still requires grad; graph constants may not (and brisk runs without
    // autograd). detach() shares the storage, as freezing's own constants do.
    if (attr.isTensor() && attr.toTensor().requires_grad()) attr = attr.toTensor().detach();
    folds.push_back(Fold{n, std::move(attr)});
  }
  return true;
}

}  // namespace

void foldRemainingAttributes(const jit::Module& frozen, const std::shared_ptr<jit::Graph>& graph) {
  if (graph->inputs().empty() || !graph->inputs()[0]->hasUses() || hasSetAttr(graph->block())) return;

  std::vector<Fold> folds;
  std::vector<jit::Node*> object_reads;
  {
    jit::AliasDb db(graph);
    if (!collect(graph->inputs()[0], frozen._ivalue(), db, folds, object_reads)) return;
  }
  // Constants go first in the graph, so they dominate every read they replace.
  jit::WithInsertPoint at_start(graph->block()->nodes().front());
  std::vector<std::pair<jit::Node*, jit::Value*>> replacements;
  for (Fold& f : folds) {
    std::optional<jit::Value*> c = jit::tryInsertConstant(*graph, f.value);
    if (!c) {
      for (auto& [node, value] : replacements) value->node()->destroy();
      return;
    }
    (*c)->setType(f.get_attr->output()->type());
    replacements.emplace_back(f.get_attr, *c);
  }
  for (auto& [node, value] : replacements) {
    node->output()->replaceAllUsesWith(value);
    node->destroy();
  }
  // Innermost reads first: each object read has no uses once its own reads are gone.
  for (auto it = object_reads.rbegin(); it != object_reads.rend(); ++it) (*it)->destroy();
}

}  // namespace brisk
