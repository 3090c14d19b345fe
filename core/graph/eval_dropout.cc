#include "core/graph/eval_dropout.h"

#include <unordered_set>
#include <vector>

#include "core/graph/graph.h"

namespace brisk {

bool isEvalDropout(const Node& n) {
  if (n.key() != "aten::dropout" || n.inputs().size() != 3 || n.outputs().size() != 1) return false;
  const Value* train = n.input(2);
  return train->isConstant() && train->constant().isBool() && !train->constant().toBool();
}

size_t removeEvalDropout(Graph& graph) {
  size_t removed = 0;
  for (Block* b : graph.allBlocks()) {
    std::unordered_set<Node*> gone;
    for (Node* n : b->nodes()) {
      if (!isEvalDropout(*n)) continue;
      graph.replaceAllUses(n->output(0), n->input(0));
      gone.insert(n);
    }
    b->eraseNodes(gone);
    removed += gone.size();
  }
  return removed;
}

}  // namespace brisk
