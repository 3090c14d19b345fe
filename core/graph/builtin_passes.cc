#include "core/graph/builtin_passes.h"

#include <ATen/core/function_schema.h>

#include <unordered_set>

#include "core/common/options.h"
#include "core/graph/constant_eval.h"
#include "core/graph/effects.h"
#include "core/graph/eval_dropout.h"
#include "core/graph/graph.h"
#include "core/graph/graph_pass.h"
#include "core/graph/inplace_reuse.h"

namespace brisk {
namespace {

// Removing a node that nothing reads is safe unless running it does something besides
// computing its results: writes an input, raises on a check, draws random numbers,
// or runs blocks / a fork.
bool removableWhenUnread(const Node& n) {
  // Blocks and forks stay: removing a loop that nothing reads is correct but rare, and
  // hasEffects says whether their contents do anything else. A delegate node's block is
  // only the group it runs, so it goes like any pure node: a backend may claim nodes a
  // fusion pass has just made dead (ops_cpu.fuse_rnn_layer leaves the replaced GRU steps
  // to this pass), and a kept partition would keep its inputs' producers alive.
  const bool delegate = n.kind() == "brisk::delegate";
  return !n.outputs().empty() && (n.blocks().empty() || delegate) && !n.subgraph() && !hasEffects(n);
}

size_t foldNode(Graph& g, Block& b, Node* n) {
  if (!n->schema() || !n->blocks().empty() || n->subgraph() || hasEffects(*n)) return 0;
  std::optional<std::vector<at::Tensor>> results = evaluateAtLoad(n->schema()->operator_name(), *n->schema(), n->inputs());
  if (!results || results->size() != n->outputs().size()) return 0;
  for (size_t i = 0; i < results->size(); ++i)
    g.replaceAllUses(n->output(i), addFoldedConstant(g, n->schema()->operator_name(), n->inputs(), (*results)[i]));
  b.eraseNode(n);
  g.addFoldedNode();
  return 1;
}

}  // namespace

size_t eliminateDeadCode(Graph& graph) {
  std::vector<Block*> blocks = graph.allBlocks();
  size_t erased = 0;
  // Inner blocks first, each back to front: a chain of unread nodes goes in one sweep,
  // as a node whose only readers are already condemned is unread too.
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {
    std::unordered_set<Node*> dead;
    for (auto it = (*b)->nodes().rbegin(); it != (*b)->nodes().rend(); ++it) {
      Node* n = *it;
      if (!removableWhenUnread(*n)) continue;
      bool read = false;
      // A read from inside a condemned node (a dead partition's own copy of the group
      // reads outer values directly) is no read; nor is one by a condemned node.
      for (const Value* o : n->outputs())
        for (const Use& u : o->uses()) {
          Node* reader = u.user ? u.user : u.block->owningNode();
          reader = reader ? reader->enclosingNodeIn(*b) : nullptr;
          read = read || !reader || !dead.count(reader);
        }
      if (!read) dead.insert(n);
    }
    (*b)->eraseNodes(dead);
    erased += dead.size();
  }
  return erased;
}

size_t foldConstants(Graph& graph) {
  size_t folded = 0;
  // Front to back, so a node reading a just-folded result folds too.
  for (Block* b : graph.allBlocks()) {
    const std::vector<Node*> nodes = b->nodes();
    for (Node* n : nodes) folded += foldNode(graph, *b, n);
  }
  return folded;
}

void addBuiltinPasses(PassRegistry& registry) {
  registry.add(GraphPass{"eliminate_dead_code", kPassOrderSimplify, "core",
                         "removes nodes whose results nothing reads and that do nothing else",
                         [](Graph& g, const PassContext&) { return eliminateDeadCode(g); }});
  registry.add(GraphPass{"remove_eval_dropout", kPassOrderSimplify, "core",
                         "readers of an eval-mode dropout read its input (the tensor ATen returns); the node goes",
                         [](Graph& g, const PassContext&) { return removeEvalDropout(g); }});
  registry.add(GraphPass{"fold_constants", kPassOrderFold, "core",
                         "computes once at load every node whose inputs are all constants",
                         [](Graph& g, const PassContext&) { return foldConstants(g); }});
  registry.add(GraphPass{"eliminate_dead_code_late", kPassOrderCleanUp, "core",
                         "eliminate_dead_code again, after folds and plugin rewrites",
                         [](Graph& g, const PassContext&) { return eliminateDeadCode(g); }});
  registry.add(GraphPass{"own_constant_outputs", kPassOrderOutputs, "core",
                         "clones model outputs that may be one of the Module's constant tensors",
                         [](Graph& g, const PassContext&) { return ownConstantOutputs(g); },
                         "without it a run may hand the caller one of the model's own tensors, and an in-place "
                         "write to that output would change every later run"});
  registry.add(GraphPass{"inplace_reuse", kPassOrderAnnotate, "core",
                         "lets elementwise kernels write into an input nothing else reads (Options::inplace_reuse)",
                         [](Graph& g, const PassContext& ctx) -> size_t {
                           return ctx.options.inplace_reuse ? static_cast<size_t>(markInPlaceReuse(g)) : 0;
                         }});
}

}  // namespace brisk
