#include "core/graph/escape_analysis.h"

#include <ATen/core/function_schema.h>

#include "core/graph/graph.h"

#include <unordered_set>

namespace brisk {
namespace {

bool hasWildcard(const c10::AliasInfo& info) {
  if (info.isWildcardAfter() || info.isWildcardBefore()) return true;
  for (const auto& c : info.containedTypes())
    if (hasWildcard(c)) return true;
  return false;
}

}  // namespace

std::vector<Value*> aliasedInputs(const Node& n) {
  if (n.kind() == kDelegateKind && n.blocks().size() == 1) {
    // A compiled partition makes fresh outputs; its nested block (run when the backend
    // does not serve a call) returns what its nodes make, which may alias the node's
    // inputs only through a chain of nodes that may return (part of) what they read.
    std::unordered_set<const Value*> may_alias(n.inputs().begin(), n.inputs().end());
    for (const Node* inner : n.block(0)->nodes())
      for (const Value* e : aliasedInputs(*inner))
        if (may_alias.count(e)) {
          may_alias.insert(inner->outputs().begin(), inner->outputs().end());
          break;
        }
    for (const Value* r : n.block(0)->returns())
      if (may_alias.count(r)) return n.inputs();
    return {};
  }
  const c10::FunctionSchema* s = n.schema();
  if (!s || s->is_vararg() || s->arguments().size() != n.inputs().size())
    return n.inputs();  // unknown semantics: everything may flow through
  std::vector<Value*> edges;
  for (size_t i = 0; i < n.inputs().size(); ++i)
    if (s->arguments()[i].alias_info() || static_cast<int>(i) == n.reusableInput()) edges.push_back(n.input(i));
  return edges;
}

std::vector<uint8_t> findEscapingValues(const Graph& graph) {
  std::vector<uint8_t> escapes(graph.numValues(), 0);
  std::vector<Value*> work;
  auto mark = [&](Value* v) {
    if (!escapes[v->id()]) {
      escapes[v->id()] = 1;
      work.push_back(v);
    }
  };
  for (Value* v : graph.outputs()) mark(v);
  // Per node: inputs that its outputs may alias (propagation edges).
  std::vector<std::vector<Value*>> aliased_inputs(graph.numNodes());
  for (const Node* n : graph.allNodes()) {
    for (const auto& b : n->blocks())
      for (Value* r : b->returns()) mark(r);
    aliased_inputs[n->index()] = aliasedInputs(*n);
    const c10::FunctionSchema* s = n->schema();
    if (!s || s->is_vararg() || s->arguments().size() != n->inputs().size()) continue;
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const c10::AliasInfo* info = s->arguments()[i].alias_info();
      if (info && hasWildcard(*info)) mark(n->input(i));  // stored somewhere untracked
    }
  }
  while (!work.empty()) {
    Value* v = work.back();
    work.pop_back();
    if (Node* p = v->producer()) {
      for (Value* in : aliased_inputs[p->index()]) mark(in);
    } else if (v->owningBlock() && v->owningBlock()->owningNode()) {
      // A sub-block parameter is fed from its owning node's inputs.
      for (Value* in : v->owningBlock()->owningNode()->inputs()) mark(in);
    }
  }
  return escapes;
}

}  // namespace brisk
