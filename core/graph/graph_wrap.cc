// Block::wrapNodes: a group of a block's nodes becomes one node with a nested block
// (the delegate partitioner's edit, core/kernels/partitioner.h).
//
// Convexity: walking the block from the group's first member to its last, a node is
// "downstream" when it reads (directly, or inside its own blocks) a value the group or
// another downstream node produced. The group is convex when no member reads a
// downstream value; then every downstream node can move after the new node and every
// other node between the members stays before it, and the order is still topological.
#include <algorithm>
#include <unordered_set>

#include "core/common/error.h"
#include "core/graph/graph.h"

namespace brisk {
namespace {

// Calls f(v) for every value `n` reads: its inputs and, inside its blocks, the returns
// and node inputs (outer values are read directly there).
template <typename F>
void forEachRead(const Node& n, const F& f) {
  for (Value* v : n.inputs()) f(v);
  for (const auto& b : n.blocks()) {
    for (const Node* inner : b->nodes()) forEachRead(*inner, f);
    for (Value* r : b->returns()) f(r);
  }
}

struct Split {
  std::string problem;
  size_t first = 0, last = 0;
  std::unordered_set<const Node*> downstream;
};

Split splitAround(const Block& block, const std::vector<Node*>& group) {
  Split s;
  if (group.empty()) return s.problem = "the group is empty", s;
  std::unordered_set<const Node*> members(group.begin(), group.end());
  if (members.size() != group.size()) return s.problem = "the group lists a node twice", s;
  for (const Node* n : group) {
    if (n->owningBlock() != &block) return s.problem = n->describe() + " is not in this block", s;
    if (!n->blocks().empty() || n->subgraph()) return s.problem = n->describe() + " has blocks of its own", s;
  }
  const auto& nodes = block.nodes();
  s.first = nodes.size();
  for (size_t i = 0; i < nodes.size(); ++i)
    if (members.count(nodes[i])) s.first = std::min(s.first, i), s.last = i;
  std::unordered_set<const Value*> from_group, from_downstream;
  for (size_t i = s.first; i <= s.last; ++i) {
    const Node* n = nodes[i];
    bool reads_group = false, reads_downstream = false;
    forEachRead(*n, [&](const Value* v) {
      reads_group = reads_group || from_group.count(v);
      reads_downstream = reads_downstream || from_downstream.count(v);
    });
    if (members.count(n)) {
      if (reads_downstream)
        return s.problem = "not convex: " + n->describe() + " reads a result of a node that reads the group", s;
      for (const Value* o : n->outputs()) from_group.insert(o);
    } else if (reads_group || reads_downstream) {
      s.downstream.insert(n);
      for (const Value* o : n->outputs()) from_downstream.insert(o);
    }
  }
  return s;
}

}  // namespace

std::string Block::wrapProblem(const std::vector<Node*>& group) const { return splitAround(*this, group).problem; }

Node* Block::wrapNodes(const std::vector<Node*>& group, const std::string& kind) {
  Split split = splitAround(*this, group);
  if (!split.problem.empty()) throw Error("wrapNodes: " + split.problem);
  std::unordered_set<const Node*> members(group.begin(), group.end());
  std::vector<Node*> ordered;  // the group in block order
  for (size_t i = split.first; i <= split.last; ++i)
    if (members.count(nodes_[i])) ordered.push_back(nodes_[i]);

  std::unordered_set<const Value*> produced;
  for (const Node* n : ordered) produced.insert(n->outputs().begin(), n->outputs().end());
  std::vector<Value*> inputs;
  std::unordered_set<const Value*> seen;
  for (const Node* n : ordered)
    for (Value* v : n->inputs())
      if (!v->isConstant() && !produced.count(v) && seen.insert(v).second) inputs.push_back(v);

  Node* w = graph_->newNode();
  w->kind_ = w->key_ = kind;
  w->inputs_ = inputs;
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i]->uses_.push_back({w, nullptr, static_cast<uint32_t>(i)});
  w->block_ = this;
  Block* inner = w->addBlock();
  for (Node* n : ordered) {
    n->block_ = inner;
    inner->nodes_.push_back(n);
    for (Value* o : n->outputs()) {
      o->block_ = inner;
      // Reads from outside the group (members have no blocks, so a nested read is
      // outside) now read a new output of `w`; the group's own reads stay.
      std::vector<Use> outside, kept;
      for (const Use& u : o->uses_) (u.user && members.count(u.user) ? kept : outside).push_back(u);
      if (outside.empty()) continue;
      Value* out = graph_->newValue(o->type(), o->name());
      out->producer_ = w;
      out->block_ = this;
      w->outputs_.push_back(out);
      for (const Use& u : outside) Value::slotOf(u) = out;
      out->uses_ = std::move(outside);
      o->uses_ = std::move(kept);
      inner->addReturn(o);
    }
  }

  std::vector<Node*> reordered(nodes_.begin(), nodes_.begin() + static_cast<std::ptrdiff_t>(split.first));
  for (size_t i = split.first; i <= split.last; ++i)
    if (!members.count(nodes_[i]) && !split.downstream.count(nodes_[i])) reordered.push_back(nodes_[i]);
  reordered.push_back(w);
  for (size_t i = split.first; i <= split.last; ++i)
    if (split.downstream.count(nodes_[i])) reordered.push_back(nodes_[i]);
  reordered.insert(reordered.end(), nodes_.begin() + static_cast<std::ptrdiff_t>(split.last) + 1, nodes_.end());
  nodes_ = std::move(reordered);
  return w;
}

}  // namespace brisk
