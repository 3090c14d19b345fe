#include "core/executor/parallel_plan.h"

#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <unordered_map>

#include "core/executor/execution_plan.h"
#include "core/graph/graph.h"

namespace brisk {
namespace {

// Rows of bits; row i, column j.
class BitMatrix {
 public:
  BitMatrix(size_t rows, size_t cols) : words_((cols + 63) / 64), bits_(rows * words_, 0) {}
  void set(size_t i, size_t j) { bits_[i * words_ + j / 64] |= uint64_t{1} << (j % 64); }
  bool test(size_t i, size_t j) const { return (bits_[i * words_ + j / 64] >> (j % 64)) & 1; }
  void orRow(size_t dst, size_t src) {
    for (size_t w = 0; w < words_; ++w) bits_[dst * words_ + w] |= bits_[src * words_ + w];
  }

 private:
  size_t words_;
  std::vector<uint64_t> bits_;
};

bool graphHasOrderedNode(const Graph& g);

// True when the interpreter's order of this node relative to others is observable:
// side effects (print, raise, warn), writes to an argument (in-place ops, list
// mutation) or nondeterminism (random ops consume the generator in order).
bool isOrdered(const Node& n) {
  if (const torch::jit::Node* jn = n.jitNode()) {
    if (jn->hasSideEffects() || jn->isNondeterministic()) return true;
  } else if (!n.schema() && n.blocks().empty() && !n.subgraph()) {
    return true;  // a hand-built node we know nothing about
  }
  if (n.schema() && n.schema()->is_mutable()) return true;
  for (const auto& b : n.blocks())
    for (const Node* inner : b->nodes())
      if (isOrdered(*inner)) return true;
  return n.subgraph() && graphHasOrderedNode(*n.subgraph());
}

bool graphHasOrderedNode(const Graph& g) {
  for (const Node* n : g.top()->nodes())
    if (isOrdered(*n)) return true;
  return false;
}

}  // namespace

void planParallelBlock(const Graph& graph, const std::vector<uint8_t>& retained, ExecBlock& eb) {
  eb.parallel.reset();
  eb.managed_conflicts = nullptr;
  const Block& block = *eb.source;
  const auto& nodes = block.nodes();
  const size_t n = nodes.size();
  if (n < 2) return;
  std::unordered_map<const Node*, uint32_t> step_of;
  for (size_t i = 0; i < n; ++i) step_of[nodes[i]] = static_cast<uint32_t>(i);

  std::vector<std::vector<const Value*>> reads(n);
  for (size_t i = 0; i < n; ++i) collectReads(nodes[i], reads[i]);

  // --- Edges ---------------------------------------------------------------------
  std::vector<std::vector<uint32_t>> preds(n);
  std::vector<uint32_t> stamp(n, UINT32_MAX);
  auto addEdge = [&](uint32_t from, uint32_t to) {
    if (stamp[from] == to) return;  // already added for this `to`
    stamp[from] = to;
    preds[to].push_back(from);
  };
  auto sp = std::make_shared<ParallelSchedule>();
  int64_t last_barrier = -1;
  for (uint32_t j = 0; j < n; ++j) {
    for (const Value* v : reads[j]) {
      const Node* p = v->producer();
      if (!p) continue;
      auto it = step_of.find(p);
      if (it != step_of.end() && it->second < j) addEdge(it->second, j);
    }
    if (isOrdered(*nodes[j])) {
      for (int64_t i = std::max<int64_t>(last_barrier, 0); i < j; ++i) addEdge(static_cast<uint32_t>(i), j);
      last_barrier = j;
      ++sp->barriers;
    } else if (last_barrier >= 0) {
      addEdge(static_cast<uint32_t>(last_barrier), j);
    }
  }

  // --- Reachability (descendants), in reverse order: edges only go forward ---------
  BitMatrix reach(n, n);
  std::vector<std::vector<uint32_t>> succs(n);
  for (uint32_t j = 0; j < n; ++j)
    for (uint32_t i : preds[j]) succs[i].push_back(j);
  for (size_t i = n; i-- > 0;)
    for (uint32_t j : succs[i]) {
      reach.set(i, j);
      reach.orRow(i, j);
    }
  bool independent = false;
  for (size_t i = 0; i < n && !independent; ++i)
    for (size_t j = i + 1; j < n && !independent; ++j) independent = !reach.test(i, j);
  if (!independent) return;  // a chain: nothing to run in parallel

  // --- Schedule arrays ---------------------------------------------------------------
  for (uint32_t i = 0; i < n; ++i) {
    sp->succ_begin.push_back(static_cast<uint32_t>(sp->succ.size()));
    sp->succ.insert(sp->succ.end(), succs[i].begin(), succs[i].end());
    sp->num_preds.push_back(static_cast<uint32_t>(preds[i].size()));
    if (preds[i].empty()) sp->roots.push_back(i);
  }
  sp->succ_begin.push_back(static_cast<uint32_t>(sp->succ.size()));

  // --- Release counters: values defined in this block that nothing after the run
  // needs (the serial executor's release rule), counted per reading step ---------------
  std::vector<uint8_t> keep(graph.numValues(), 0);
  for (const Value* r : block.returns()) keep[r->id()] = 1;
  std::unordered_map<uint32_t, uint32_t> counter_of;  // value id -> counter
  std::vector<std::vector<uint32_t>> rel(n);
  auto releasable = [&](const Value* v) {
    return v->owningBlock() == &block && !v->isConstant() && !retained[v->id()] && !keep[v->id()];
  };
  auto counterFor = [&](const Value* v) {
    auto [it, fresh] = counter_of.emplace(v->id(), static_cast<uint32_t>(sp->counter_slot.size()));
    if (fresh) {
      sp->counter_slot.push_back(v->id());
      sp->counter_init.push_back(0);
    }
    return it->second;
  };
  for (uint32_t j = 0; j < n; ++j) {
    std::vector<uint32_t>& mine = rel[j];
    for (const Value* v : reads[j]) {
      if (!releasable(v)) continue;
      const uint32_t c = counterFor(v);
      if (std::find(mine.begin(), mine.end(), c) != mine.end()) continue;  // read twice by one step
      mine.push_back(c);
      ++sp->counter_init[c];
    }
  }
  for (uint32_t j = 0; j < n; ++j)
    for (const Value* out : nodes[j]->outputs())
      if (releasable(out) && !counter_of.count(out->id())) {  // never read: dies at once
        const uint32_t c = counterFor(out);
        rel[j].push_back(c);
        sp->counter_init[c] = 1;
      }
  for (uint32_t j = 0; j < n; ++j) {
    sp->rel_begin.push_back(static_cast<uint32_t>(sp->rel.size()));
    sp->rel.insert(sp->rel.end(), rel[j].begin(), rel[j].end());
  }
  sp->rel_begin.push_back(static_cast<uint32_t>(sp->rel.size()));
  eb.parallel = sp;

  // --- Managed tensors: "a is dead before b exists" from reachability -----------------
  // (planManagedValues found each one's readers, views included.)
  const size_t m = eb.managed.size();
  if (m == 0) return;
  auto before = std::make_shared<BitMatrix>(m, m);  // before(a, b): a dead before b exists
  for (size_t a = 0; a < m; ++a)
    for (size_t b = 0; b < m; ++b) {
      if (a == b) continue;
      const uint32_t pb = eb.managed[b].first;
      const ManagedValue& ma = eb.managed[a];
      bool all = reach.test(ma.first, pb);
      for (uint32_t u : ma.readers) all = all && reach.test(u, pb);
      if (all) before->set(a, b);
    }
  eb.managed_conflicts = [before](size_t a, size_t b) { return !before->test(a, b) && !before->test(b, a); };
}

}  // namespace brisk
