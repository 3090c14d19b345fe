// Rewriting a Graph at load (graph passes): insert, erase, redirect reads. Each edit
// keeps the values' use lists (Value::uses) current, so none of them scans the graph.
#include <algorithm>
#include <unordered_set>

#include "core/common/error.h"
#include "core/graph/graph.h"

namespace brisk {
namespace {

// The node of `b` whose evaluation performs the read `u` (the reader itself, or the node
// holding the block it sits in); null when the read is not inside a node of `b`.
Node* readerIn(const Use& u, const Block* b) {
  Node* n = u.user ? u.user : u.block->owningNode();
  return n ? n->enclosingNodeIn(b) : nullptr;
}

// The nodes of n's blocks, nested ones included (they go with it when it is erased).
size_t nodesInside(const Node& n) {
  size_t count = 0;
  for (const auto& b : n.blocks())
    for (const Node* inner : b->nodes()) count += 1 + nodesInside(*inner);
  return count;
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

void Block::forgetReads(Node* n) {
  for (size_t i = 0; i < n->inputs_.size(); ++i) n->inputs_[i]->removeUse({n, nullptr, static_cast<uint32_t>(i)});
  for (const auto& b : n->blocks_) {
    for (Node* inner : b->nodes_) forgetReads(inner);
    for (size_t i = 0; i < b->returns_.size(); ++i) b->returns_[i]->removeUse({nullptr, b.get(), static_cast<uint32_t>(i)});
  }
}

void Block::eraseNode(Node* n) { eraseNodes({n}); }

void Block::eraseNodes(const std::unordered_set<Node*>& dead) {
  if (dead.empty()) return;
  for (const Node* n : dead)
    if (n->block_ != this) throw Error("eraseNode: " + n->describe() + " is not in this block");
  // Nothing that stays may read what goes.
  for (const Node* n : dead)
    for (const Value* o : n->outputs())
      for (const Use& u : o->uses()) {
        Node* reader = readerIn(u, this);
        if (!reader || !dead.count(reader))
          throw Error("eraseNode: " + n->describe() + ": its output " + o->ref() + " is still read" +
                      (u.user ? " by " + u.user->describe() : ""));
      }
  for (Node* n : dead) forgetReads(n);
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(), [&](Node* n) { return dead.count(n) != 0; }),
               nodes_.end());
  for (Node* n : dead) {
    n->block_ = nullptr;
    graph_->erased_nodes_ += 1 + nodesInside(*n);
  }
}

size_t Graph::replaceAllUses(Value* from, Value* to) {
  if (from == to) return from->uses_.size();
  std::vector<Use> moved;
  moved.swap(from->uses_);
  for (const Use& u : moved) {
    Value::slotOf(u) = to;
    to->uses_.push_back(u);
  }
  return moved.size();
}

}  // namespace brisk
