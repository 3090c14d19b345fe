#pragma once
// Load-time half of the parallel executor (Options::max_parallel_ops > 1): the
// dependency DAG of a block's steps and what it implies for memory.
//
// Edges: step j depends on step i when j (or a node nested in it) reads a value i
// produces. Nodes with effects the interpreter orders (side effects, mutation of an
// input, nondeterminism — e.g. prim::Print, aten::append, aten::rand) act as barriers:
// they run after every earlier step and before every later one.
//
// Releases: a value dies when the last of its readers finishes (an atomic count per
// value and run), not at a serial position.
//
// Memory: two managed tensors may share slab bytes only when every use of one (its
// producer, its readers and readers of its views) precedes the other's producer in the
// DAG, i.e. in every schedule the parallel executor can produce. That relation is
// stored in ExecBlock::managed_conflicts for the planner.
#include <cstdint>
#include <memory>
#include <vector>

namespace brisk {

class BlockLiveness;
struct ExecBlock;

struct ParallelSchedule {
  // Successors of step i: succ[succ_begin[i] .. succ_begin[i + 1]).
  std::vector<uint32_t> succ_begin, succ;
  std::vector<uint32_t> num_preds;  // per step
  std::vector<uint32_t> roots;      // steps without predecessors, in serial order
  // Release counters decremented after step i: rel[rel_begin[i] .. rel_begin[i + 1]).
  std::vector<uint32_t> rel_begin, rel;
  std::vector<uint32_t> counter_slot;  // per counter: the value's slot
  std::vector<uint32_t> counter_init;  // per counter: readers per run
  size_t barriers = 0;                 // steps treated as barriers (for inspect/tests)
};

// Builds `block.parallel` and `block.managed_conflicts` from the block's liveness (call
// after planManagedValues). Leaves both empty when no two steps of the block are
// independent (a chain): the serial executor is then strictly better.
void planParallelBlock(const BlockLiveness& live, ExecBlock& block);

}  // namespace brisk
