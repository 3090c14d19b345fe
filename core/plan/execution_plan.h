#pragma once
// The flat, load-time-compiled form of a Graph that the executor walks.
//
// Every Value's id is its slot in the Runtime's IValue array. A Step names its kernel
// and ranges into one shared index array (inputs, outputs, slots to release after
// the step). Blocks of prim::If / prim::Loop are ExecBlocks of the same plan, so the
// whole graph shares one slot array; prim::fork subgraphs are separate child Modules.
// The memory layer fills a block's `managed`, the parallel plan its `parallel` and
// `managed_conflicts`, the executor walks it: the plan sits below all three.
#include <ATen/core/ivalue.h>

#include <deque>
#include <memory>
#include <vector>

#include "core/kernels/block_runner.h"
#include "core/kernels/kernel.h"
#include "planners/layout.h"

namespace brisk {

class Block;
class Node;
struct ParallelSchedule;

struct Step {
  const Kernel* kernel;
  const Node* node;
  uint32_t in_begin, num_in;
  uint32_t out_begin, num_out;
  uint32_t release_begin, num_release;  // slots whose last use is this step
};

// A tensor the memory planner places in its block's slab (see core/memory/memory_plan.h):
// a retained out-variant output and the inclusive range of this block's steps during
// which it or any value that may alias it is live (uses inside nested blocks count at
// the enclosing node's step).
struct ManagedValue {
  uint32_t slot;
  uint32_t first;  // producer's step
  uint32_t last;   // last step reading it or an alias of it
  // Every step reading it or an alias of it, ascending (the parallel executor's
  // conflict relation needs all of them, not only the last).
  std::vector<uint32_t> readers;
};

struct ExecBlock {
  const Block* source = nullptr;
  uint32_t id = 0;  // position in ExecutionPlan::blocks
  std::vector<Step> steps;
  std::vector<uint32_t> params;
  std::vector<uint32_t> returns;
  // Per return: defined inside this block and not returned again at a later position,
  // so the consumer may move it out (an outer value, a constant, or the earlier copies
  // of a value returned twice must be copied instead).
  std::vector<uint8_t> return_is_local;

  // Return i's value, taken from the slots after the block ran: moved when local,
  // copied otherwise. Called for i in ascending order.
  c10::IValue takeReturn(c10::IValue* slots, size_t i) const {
    c10::IValue& v = slots[returns[i]];
    return return_is_local[i] ? std::move(v) : v;
  }
  // Tensors planned into this block's slab (empty without memory planning).
  std::vector<ManagedValue> managed;
  // "May be live at the same time" over indices of `managed` when the block runs on the
  // parallel executor (DAG reachability); empty for serial blocks, where the steps'
  // intervals [first, last] decide.
  planners::ConflictFn managed_conflicts;
  // The block's dependency DAG when it runs on the parallel executor; null: serial.
  std::shared_ptr<const ParallelSchedule> parallel;
};

struct ExecutionPlan {
  std::deque<ExecBlock> blocks;  // [0] is the graph's top block; deque keeps pointers stable
  std::vector<uint32_t> indices;  // storage for every Step's slot lists
  uint32_t num_slots = 0;
  std::vector<std::pair<uint32_t, c10::IValue>> constants;  // copied into each Runtime once
  // Out-variant outputs that never escape the run: kept in their slot between runs so
  // the kernel can write into the same tensor again.
  std::vector<uint8_t> retained;  // per slot
  // Slots cleared at the end of every run (everything but constants and retained).
  std::vector<uint32_t> cleanup;
  std::vector<std::unique_ptr<Kernel>> kernels;
  // What the higher-order kernels among them hold for their nested blocks
  // (KernelBuildContext::compileBlock).
  std::vector<std::unique_ptr<const BlockRunner>> runners;
  // Kernels that keep per-Runtime state (delegate partitions) reserved this many
  // entries of Runtime::kernelState at load.
  uint32_t num_kernel_states = 0;
  // The layout algorithm chosen by Options::planner (from planners::PlannerRegistry).
  const planners::LayoutAlgorithm* layout = nullptr;
};

}  // namespace brisk
