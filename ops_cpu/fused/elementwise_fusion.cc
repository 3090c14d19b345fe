// ops_cpu.fuse_pointwise (elementwise_fusion.h).
//
// Per block: mark the nodes that may be fused, join marked nodes connected by a value
// into candidate groups (union-find), cut each candidate in block order into convex runs
// (Block::wrapProblem), and replace each run of >= 2 nodes that compiles. The surgery
// uses Block::wrapNodes (it moves nodes that depend on the group after it), then swaps
// the wrapper for the block-less fused node that reads the same values.
#include "ops_cpu/fused/elementwise_fusion.h"

#include <ATen/core/ivalue.h>

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/common/options.h"
#include "core/graph/graph.h"
#include "ops_cpu/fused/fused_pointwise.h"

namespace brisk::ops_cpu {
namespace {

// Ops whose elementwise consumers a delegate backend takes as post-ops.
bool isPostOpAnchor(const Node* n) {
  static const std::unordered_set<std::string> kinds = {
      "aten::conv1d",      "aten::conv2d",      "aten::conv3d",
      "aten::convolution", "aten::_convolution", "aten::linear",
      "aten::addmm",       "aten::mm",          "aten::matmul",
      "aten::bmm",         "aten::batch_norm",  "aten::_native_batch_norm_legit_no_training"};
  return n && kinds.count(n->kind()) > 0;
}

bool isInplaceKey(const std::string& key) {
  const std::string name = key.substr(0, key.find('.'));
  return !name.empty() && name.back() == '_';
}

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
};

// The group in the fused node's encoding; inputs are every value a member reads that no
// member produces (constants included), outputs every member result read outside.
struct Encoded {
  std::vector<PointwiseStep> steps;
  std::vector<Value*> inputs;
  std::vector<int> outs;
  std::vector<Value*> out_values;
};

Encoded encode(const std::vector<Node*>& group) {
  Encoded e;
  std::unordered_map<const Value*, int> produced, input_index;
  std::unordered_set<const Node*> members(group.begin(), group.end());
  for (size_t s = 0; s < group.size(); ++s) {
    const Node* n = group[s];
    PointwiseStep st;
    st.key = n->key();
    st.args.push_back(static_cast<int>(n->inputs().size()));
    for (Value* v : n->inputs()) {
      if (auto it = produced.find(v); it != produced.end()) {
        st.args.push_back(-it->second - 1);
        continue;
      }
      auto [it, fresh] = input_index.emplace(v, static_cast<int>(e.inputs.size()));
      if (fresh) e.inputs.push_back(v);
      st.args.push_back(it->second);
    }
    produced[n->output(0)] = static_cast<int>(s);
    e.steps.push_back(std::move(st));
  }
  for (size_t s = 0; s < group.size(); ++s) {
    Value* v = group[s]->output(0);
    const bool outside = std::any_of(v->uses().begin(), v->uses().end(),
                                     [&](const Use& u) { return u.isReturn() || !members.count(u.user); });
    if (outside) {
      e.outs.push_back(static_cast<int>(s));
      e.out_values.push_back(v);
    }
  }
  return e;
}

// An in-place member must write a tensor made in the group that nothing else reads.
bool inplaceSafe(const std::vector<Node*>& group) {
  std::unordered_set<const Node*> members(group.begin(), group.end());
  for (const Node* n : group) {
    if (!isInplaceKey(n->key())) continue;
    const Value* self = n->input(0);
    if (!members.count(self->producer()) || self->soleUser() != n) return false;
  }
  return true;
}

// Replaces `group` (convex, compiles) by one fused node; returns false when it cannot.
bool rewrite(Block& block, const std::vector<Node*>& group) {
  Encoded e = encode(group);
  if (e.out_values.empty() || !inplaceSafe(group)) return false;
  if (!pointwiseGroupProblem(e.steps, e.inputs, e.outs).empty()) return false;
  if (!block.wrapProblem(group).empty()) return false;
  Node* wrapper = block.wrapNodes(group, std::string(kFusedPointwiseKind) + ".wrap");
  // The wrapper's outputs are, in order, the values its block returns.
  const std::vector<Value*>& returns = wrapper->block(0)->returns();
  std::vector<int> outs;
  for (Value* r : returns) {
    auto it = std::find(e.out_values.begin(), e.out_values.end(), r);
    if (it == e.out_values.end()) return false;  // cannot happen: wrapNodes returns what is read outside
    outs.push_back(e.outs[it - e.out_values.begin()]);
  }
  NodeSpec spec;
  spec.kind = kFusedPointwiseKind;
  spec.schema = fusedPointwiseSchema(e.inputs.size(), returns.size());
  spec.inputs = e.inputs;
  for (Value* r : returns) spec.outputs.emplace_back(c10::TensorType::get(), r->name());
  Node* fused = block.insertNodeBefore(wrapper, std::move(spec));
  c10::impl::GenericList ops(c10::StringType::get());
  std::vector<int64_t> args, out_list(outs.begin(), outs.end());
  for (const PointwiseStep& st : e.steps) {
    ops.push_back(st.key);
    args.insert(args.end(), st.args.begin(), st.args.end());
  }
  fused->setAttribute("ops", c10::IValue(ops));
  fused->setAttribute("args", c10::IValue(args));
  fused->setAttribute("outs", c10::IValue(out_list));
  Graph& g = *block.graph();
  for (size_t i = 0; i < wrapper->outputs().size(); ++i) g.replaceAllUses(wrapper->output(i), fused->output(i));
  block.eraseNode(wrapper);
  return true;
}

size_t fuseBlock(Block& block) {
  const std::vector<Node*> nodes = block.nodes();
  std::unordered_map<const Node*, size_t> pos;
  for (size_t i = 0; i < nodes.size(); ++i) pos[nodes[i]] = i;
  // Which nodes may join: a supported op that does not continue a post-op chain.
  std::vector<uint8_t> ok(nodes.size(), 0), post_op(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* n = nodes[i];
    if (!pointwiseNodeProblem(*n).empty()) continue;
    bool chained = false;
    for (const Value* v : n->inputs()) {
      const Node* p = v->producer();
      if (!p) continue;
      auto it = pos.find(p);
      if (isPostOpAnchor(p) || (it != pos.end() && post_op[it->second])) chained = true;
    }
    if (chained) {
      post_op[i] = 1;
      continue;
    }
    ok[i] = 1;
  }
  UnionFind uf(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!ok[i]) continue;
    for (const Value* v : nodes[i]->inputs()) {
      auto it = v->producer() ? pos.find(v->producer()) : pos.end();
      if (it != pos.end() && ok[it->second]) uf.join(i, it->second);
    }
  }
  std::unordered_map<size_t, std::vector<Node*>> groups;  // root -> members in block order
  std::vector<size_t> roots;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!ok[i]) continue;
    auto& g = groups[uf.find(i)];
    if (g.empty()) roots.push_back(uf.find(i));
    g.push_back(nodes[i]);
  }
  size_t fused = 0;
  for (size_t root : roots) {
    const std::vector<Node*>& members = groups[root];
    if (members.size() < 2) continue;
    // Convex runs in block order.
    std::vector<Node*> run;
    auto flush = [&] {
      if (run.size() >= 2 && rewrite(block, run)) fused += run.size();
      run.clear();
    };
    for (Node* n : members) {
      run.push_back(n);
      if (run.size() >= 2 && !block.wrapProblem(run).empty()) {
        run.pop_back();
        flush();
        run.push_back(n);
      }
    }
    flush();
  }
  return fused;
}

}  // namespace

size_t fusePointwise(Graph& g, const PassContext& ctx) {
  // The fused node has an out-variant kernel only (no TorchScript operator): without that
  // registry the original nodes must stay.
  if (ctx.options.fallback_only || !ctx.options.use_out_variants) return 0;
  size_t fused = 0;
  for (Block* b : g.allBlocks()) {
    // A delegate partition's nested block is its fallback: left as the backend saw it.
    if (b->owningNode() && b->owningNode()->kind() == kDelegateKind) continue;
    fused += fuseBlock(*b);
  }
  return fused;
}

void registerElementwiseFusion(PluginRegistrar& r) {
  // After partition_delegates: whichever claims a node first keeps it, and delegate
  // backends (oneDNN's conv / linear chains with their post-ops) claim first.
  r.pass("fuse_pointwise", kPassOrderPartition + 50, fusePointwise,
         "groups of >= 2 connected elementwise nodes (arithmetic, comparisons, where, clamp, activations) -> one "
         "ops_cpu::fused_pointwise node, one vectorized loop");
}

}  // namespace brisk::ops_cpu
