// Rewriting a Graph at load (graph passes): insert, erase, redirect reads. Linear scans
// over the graph: passes run once per load, and graphs have thousands of nodes at most.
#include <algorithm>

#include "core/common/error.h"
#include "core/graph/graph.h"

namespace brisk {
namespace {

// Calls f(block) for every block of `b`'s tree, `b` first. Fork subgraphs are other
// Graphs: their values are not this graph's.
template <typename F>
void forEachBlock(Block* b, const F& f) {
  std::vector<Block*> stack{b};
  while (!stack.empty()) {
    Block* cur = stack.back();
    stack.pop_back();
    f(*cur);
    for (Node* n : cur->nodes())
      for (const auto& sub : n->blocks()) stack.push_back(sub.get());
  }
}

}  // namespace

Node* Block::insertNodeBefore(Node* before, NodeSpec spec) {
  auto pos = std::find(nodes_.begin(), nodes_.end(), before);
  if (pos == nodes_.end()) throw Error("insertNodeBefore: " + before->describe() + " is not in this block");
  const size_t at = static_cast<size_t>(pos - nodes_.begin());
  Node* n = appendNode(std::move(spec));  // at the end, then moved into place
  nodes_.pop_back();
  nodes_.insert(nodes_.begin() + static_cast<std::ptrdiff_t>(at), n);
  return n;
}

void Block::eraseNode(Node* n) {
  auto pos = std::find(nodes_.begin(), nodes_.end(), n);
  if (pos == nodes_.end()) throw Error("eraseNode: " + n->describe() + " is not in this block");
  for (const Value* o : n->outputs())
    if (graph_->countUses(o) != 0)
      throw Error("eraseNode: " + n->describe() + ": its output " + o->ref() + " is still read");
  nodes_.erase(pos);
  n->block_ = nullptr;
  ++graph_->erased_nodes_;
}

size_t Graph::replaceAllUses(const Value* from, Value* to) {
  size_t changed = 0;
  forEachBlock(top_.get(), [&](Block& b) {
    for (Node* n : b.nodes_)
      for (Value*& in : n->inputs_)
        if (in == from) in = to, ++changed;
    for (Value*& r : b.returns_)
      if (r == from) r = to, ++changed;
  });
  return changed;
}

size_t Graph::countUses(const Value* v) const {
  size_t uses = 0;
  forEachBlock(top_.get(), [&](Block& b) {
    for (const Node* n : b.nodes()) uses += std::count(n->inputs().begin(), n->inputs().end(), v);
    uses += std::count(b.returns().begin(), b.returns().end(), v);
  });
  return uses;
}

}  // namespace brisk
