#pragma once
// Memory planning: every managed tensor of a block lives in one slab
// (docs/architecture.md, "Memory planning"; the scheme of Static Runtime's MemoryPlanner).
//
// Load time (planManagedValues): the managed tensors of an ExecBlock are its retained
// out-variant outputs (they never escape a run); each gets the range of the block's
// steps during which it, or any value that may alias it (views, containers: the edges
// of escape analysis), is read. Uses inside nested blocks count at the enclosing step.
//
// Run time (BlockMemory, core/memory/block_memory.h, one per Runtime and block with
// managed tensors): the block's first run is the profile run (kernels allocate as
// usual). At its end each managed tensor's storage size is recorded (tensors sharing a
// storage are planned once, with the union of their ranges), the layout algorithm
// places them, and one slab is allocated. Before every later run of the block each
// managed storage is pointed into the slab at its offset; after the block it is
// detached again (null data, 0 bytes), so between runs no managed tensor holds memory
// outside the slab. A tensor that grew past its planned size during a run (the kernel
// reallocated it) triggers a re-plan with the largest sizes seen. Loop bodies do this
// per iteration: both passes are flat loops over the block's managed slots.
//
// Safety net: a managed storage found referenced from outside the managed slots after
// the block (escape analysis was wrong, or an unusual kernel) is copied out of the slab
// and that value is no longer managed (it is then allocated fresh every run).
//
// Outputs of kernels without an out= form (convolution) are managed too: the kernel
// wraps its call in an OutputCapture (core/kernels/output_capture.h) and BlockMemory,
// installed as the thread's AllocationHook (core/memory/capture_allocator.h) while the
// block runs, serves the allocation that becomes the result at the value's planned
// offset.
//
// Lean profile run (core/memory/profile_run.h): managed tensors whose last reader has
// run give their storage back during the profile run, so its peak is the largest live
// set rather than the sum of all managed tensors.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace brisk {

class BlockLiveness;
class Graph;
struct ExecBlock;

struct MemoryStats {
  size_t slab_bytes = 0;       // sum of the blocks' slabs
  size_t lower_bound = 0;      // sum of planners::lowerBound over the same specs
  size_t managed_tensors = 0;  // tensors placed in a slab
  uint64_t plans = 0;          // layouts computed (profile runs + re-plans)
  uint64_t replans = 0;        // layouts recomputed because a tensor outgrew its plan
  uint64_t evictions = 0;      // managed tensors found shared after a run (safety net)
  // Managed outputs of allocating kernels (OutputCapture) served from the slab in the
  // latest run of each block, and those that fell back to a fresh allocation.
  size_t captured_outputs = 0;
  size_t capture_misses = 0;
  // Temporaries of capturing kernels (oneDNN's buffers) served from the slab in the
  // latest run, and the slab bytes planned for them (counted in slab_bytes too).
  size_t scratch_allocations = 0;
  size_t scratch_bytes = 0;
  // Profile runs: the largest sum of managed bytes holding memory at once (the lean
  // profile run frees managed tensors after their last use), and the sum of all.
  size_t profile_peak_bytes = 0;
  size_t profile_total_bytes = 0;
  // Options::manage_output_tensors (core/memory/output_arena.h): outputs placed in the
  // output arena, its current block's bytes, runs that reused it, and runs that needed a
  // second block because the caller still held the previous run's outputs.
  size_t output_arena_tensors = 0;
  size_t output_arena_bytes = 0;
  uint64_t output_arena_reuses = 0;
  uint64_t output_arena_second_blocks = 0;
};

// Load time: fills `block.managed` from the plan's retained values (per slot), following
// each through the values that may alias it over the block's liveness.
void planManagedValues(const Graph& graph, const BlockLiveness& live, const std::vector<uint8_t>& retained,
                       ExecBlock& block);

}  // namespace brisk
