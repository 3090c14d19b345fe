#include "core/plan/parallel_plan.h"

#include <algorithm>
#include <unordered_map>

#include "core/plan/execution_plan.h"
#include "core/graph/effects.h"
#include "core/graph/graph.h"
#include "core/graph/liveness.h"

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

// True when the interpreter's order of this node relative to others is observable
// (core/graph/effects.h: side effects, writes to an argument, nondeterminism).
bool isOrdered(const Node& n) { return hasEffects(n); }

// Step j's predecessors: the producers (in this block) of what it reads, and the
// barriers ordered nodes impose. Counts the barriers in `sp`.
std::vector<std::vector<uint32_t>> dependencyEdges(const Block& block, const BlockLiveness& live,
                                                   ParallelSchedule& sp) {
  const auto& nodes = block.nodes();
  const auto n = static_cast<uint32_t>(nodes.size());
  std::vector<std::vector<uint32_t>> preds(n);
  std::vector<uint32_t> stamp(n, UINT32_MAX);
  auto addEdge = [&](uint32_t from, uint32_t to) {
    if (stamp[from] == to) return;  // already added for this `to`
    stamp[from] = to;
    preds[to].push_back(from);
  };
  int64_t last_barrier = -1;
  for (uint32_t j = 0; j < n; ++j) {
    for (const Value* v : live.reads(j)) {
      const ValueLiveness* l = live.find(v->id());
      if (l && l->def != ValueLiveness::kNoStep && l->def < j) addEdge(l->def, j);
    }
    if (isOrdered(*nodes[j])) {
      for (int64_t i = std::max<int64_t>(last_barrier, 0); i < j; ++i) addEdge(static_cast<uint32_t>(i), j);
      last_barrier = j;
      ++sp.barriers;
    } else if (last_barrier >= 0) {
      addEdge(static_cast<uint32_t>(last_barrier), j);
    }
  }
  return preds;
}

// Descendants of every step, in reverse order (edges only go forward).
BitMatrix reachability(const std::vector<std::vector<uint32_t>>& succs) {
  const size_t n = succs.size();
  BitMatrix reach(n, n);
  for (size_t i = n; i-- > 0;)
    for (uint32_t j : succs[i]) {
      reach.set(i, j);
      reach.orRow(i, j);
    }
  return reach;
}

bool hasIndependentSteps(const BitMatrix& reach, size_t n) {
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j)
      if (!reach.test(i, j)) return true;
  return false;
}

void scheduleArrays(const std::vector<std::vector<uint32_t>>& preds, const std::vector<std::vector<uint32_t>>& succs,
                    ParallelSchedule& sp) {
  for (uint32_t i = 0; i < preds.size(); ++i) {
    sp.succ_begin.push_back(static_cast<uint32_t>(sp.succ.size()));
    sp.succ.insert(sp.succ.end(), succs[i].begin(), succs[i].end());
    sp.num_preds.push_back(static_cast<uint32_t>(preds[i].size()));
    if (preds[i].empty()) sp.roots.push_back(i);
  }
  sp.succ_begin.push_back(static_cast<uint32_t>(sp.succ.size()));
}

// The liveness' released values, counted per reading step: a value dies when the last
// of its readers finishes, whatever order they ran in.
void releaseCounters(const Block& block, const BlockLiveness& live, ParallelSchedule& sp) {
  const auto& nodes = block.nodes();
  const size_t n = nodes.size();
  std::unordered_map<uint32_t, uint32_t> counter_of;  // value id -> counter
  std::vector<std::vector<uint32_t>> rel(n);
  auto counterFor = [&](uint32_t id, uint32_t readers) {
    auto [it, fresh] = counter_of.emplace(id, static_cast<uint32_t>(sp.counter_slot.size()));
    if (fresh) {
      sp.counter_slot.push_back(id);
      sp.counter_init.push_back(readers);
    }
    return it->second;
  };
  for (uint32_t j = 0; j < n; ++j)
    for (const Value* v : live.reads(j))
      if (const ValueLiveness* l = live.find(v->id()); l && l->released)
        rel[j].push_back(counterFor(v->id(), static_cast<uint32_t>(l->readers.size())));
  for (uint32_t j = 0; j < n; ++j)
    for (const Value* out : nodes[j]->outputs())
      if (const ValueLiveness* l = live.find(out->id()); l->released && l->readers.empty())
        rel[j].push_back(counterFor(out->id(), 1));  // never read: dies at once
  for (uint32_t j = 0; j < n; ++j) {
    sp.rel_begin.push_back(static_cast<uint32_t>(sp.rel.size()));
    sp.rel.insert(sp.rel.end(), rel[j].begin(), rel[j].end());
  }
  sp.rel_begin.push_back(static_cast<uint32_t>(sp.rel.size()));
}

// "a is dead before b exists" from reachability, over the managed values' producers and
// readers (views included).
planners::ConflictFn managedConflicts(const std::vector<ManagedValue>& managed, const BitMatrix& reach) {
  const size_t m = managed.size();
  auto before = std::make_shared<BitMatrix>(m, m);  // before(a, b): a dead before b exists
  for (size_t a = 0; a < m; ++a)
    for (size_t b = 0; b < m; ++b) {
      if (a == b) continue;
      const uint32_t pb = managed[b].first;
      const ManagedValue& ma = managed[a];
      bool all = reach.test(ma.first, pb);
      for (uint32_t u : ma.readers) all = all && reach.test(u, pb);
      if (all) before->set(a, b);
    }
  return [before](size_t a, size_t b) { return !before->test(a, b) && !before->test(b, a); };
}

}  // namespace

void planParallelBlock(const BlockLiveness& live, ExecBlock& eb) {
  eb.parallel.reset();
  eb.managed_conflicts = nullptr;
  const Block& block = *eb.source;
  const size_t n = block.nodes().size();
  if (n < 2) return;
  auto sp = std::make_shared<ParallelSchedule>();
  const std::vector<std::vector<uint32_t>> preds = dependencyEdges(block, live, *sp);
  std::vector<std::vector<uint32_t>> succs(n);
  for (uint32_t j = 0; j < n; ++j)
    for (uint32_t i : preds[j]) succs[i].push_back(j);
  const BitMatrix reach = reachability(succs);
  if (!hasIndependentSteps(reach, n)) return;  // a chain: nothing to run in parallel
  scheduleArrays(preds, succs, *sp);
  releaseCounters(block, live, *sp);
  eb.parallel = sp;
  if (!eb.managed.empty()) eb.managed_conflicts = managedConflicts(eb.managed, reach);
}

}  // namespace brisk
