// Rewriting a Graph at load (graph passes): insert, erase, redirect reads. Linear scans
// over the graph: passes run once per load, and graphs have thousands of nodes at most.
#include <algorithm>
#include <unordered_set>

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

void Block::eraseNode(Node* n) { eraseNodes({n}); }

void Block::eraseNodes(const std::unordered_set<Node*>& dead) {
  if (dead.empty()) return;
  std::unordered_set<const Value*> gone;
  for (const Node* n : dead) {
    if (n->block_ != this) throw Error("eraseNode: " + n->describe() + " is not in this block");
    gone.insert(n->outputs().begin(), n->outputs().end());
  }
  // One scan for the whole set: nothing that stays may read what goes.
  forEachBlock(graph_->top_.get(), [&](Block& b) {
    for (const Node* n : b.nodes_)
      if (!dead.count(const_cast<Node*>(n)))
        for (const Value* in : n->inputs())
          if (gone.count(in)) throw Error("eraseNode: " + in->producer()->describe() + ": its output " + in->ref() +
                                          " is still read by " + n->describe());
    for (const Value* r : b.returns_)
      if (gone.count(r)) throw Error("eraseNode: " + r->producer()->describe() + ": its output " + r->ref() +
                                     " is still read");
  });
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(), [&](Node* n) { return dead.count(n) != 0; }),
               nodes_.end());
  for (Node* n : dead) n->block_ = nullptr;
  graph_->erased_nodes_ += dead.size();
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
