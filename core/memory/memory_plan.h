#pragma once
// Memory planning: every managed tensor of a block lives in one slab (issue "Memory
// planning"; the scheme of Static Runtime's MemoryPlanner).
//
// Load time (planManagedValues): the managed tensors of an ExecBlock are its retained
// out-variant outputs (they never escape a run); each gets the range of the block's
// steps during which it, or any value that may alias it (views, containers: the edges
// of escape analysis), is read. Uses inside nested blocks count at the enclosing step.
//
// Run time (BlockMemory, one per Runtime and block with managed tensors): the block's
// first run is the profile run (kernels allocate as usual). At its end each managed
// tensor's storage size is recorded (tensors sharing a storage are planned once, with
// the union of their ranges), the layout algorithm places them, and one slab is
// allocated. Before every later run of the block each managed storage is pointed into
// the slab at its offset; after the block it is detached again (null data, 0 bytes),
// so between runs no managed tensor holds memory outside the slab. A tensor that grew
// past its planned size during a run (the kernel reallocated it) triggers a re-plan
// with the largest sizes seen. Loop bodies do this per iteration: both passes are flat
// loops over the block's managed slots.
//
// Safety net: a managed storage found referenced from outside the managed slots after
// the block (escape analysis was wrong, or an unusual kernel) is copied out of the slab
// and that value is no longer managed (it is then allocated fresh every run).
//
// Outputs of kernels without an out= form (convolution) are managed too: the kernel
// wraps its call in an OutputCapture (core/kernels/output_capture.h) and BlockMemory, installed
// as the thread's AllocationHook (core/memory/capture_allocator.h) while the block runs, serves
// the allocation that becomes the result at the value's planned offset.
//
// Lean profile run: in the profile run every managed tensor is a separate allocation
// and, being retained, would stay alive until the block ends, so that run's peak would
// be the sum of all managed tensors rather than the largest live set. Instead, on each
// large allocation during the profile run of a serial block, managed tensors whose
// last reader has already run (their last step is before the newest managed producer
// that has run) record their size and give their storage back at once.
#include <ATen/core/ivalue.h>
#include <c10/core/Allocator.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/memory/capture_allocator.h"
#include "planners/layout.h"

namespace brisk {

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
  // Options::manage_output_tensors (core/memory/output_arena.h): outputs placed in the output
  // arena, its current block's bytes, runs that reused it, and runs that needed a
  // second block because the caller still held the previous run's outputs.
  size_t output_arena_tensors = 0;
  size_t output_arena_bytes = 0;
  uint64_t output_arena_reuses = 0;
  uint64_t output_arena_second_blocks = 0;
};

// Load time: fills `block.managed` from the plan's retained values (per slot).
void planManagedValues(const Graph& graph, const std::vector<uint8_t>& retained, ExecBlock& block);

// Run time: one block's slab and managed tensors in one Runtime. Not thread-safe (a
// Runtime runs on one thread at a time).
class BlockMemory final : public AllocationHook {
 public:
  // plan_scratch: Options::plan_kernel_scratch.
  BlockMemory(const ExecBlock& block, const planners::LayoutAlgorithm& layout, bool plan_scratch = true);
  ~BlockMemory();
  BlockMemory(const BlockMemory&) = delete;
  BlockMemory& operator=(const BlockMemory&) = delete;

  // Before the block's first step: points managed storages into the slab.
  void prepare(c10::IValue* slots);
  // After its last step: records sizes, detaches storages, (re)plans when needed.
  // Returns true when the layout changed.
  bool finish(c10::IValue* slots);
  // After a failed run: detaches (or copies out, if shared) and clears managed slots.
  void abort(c10::IValue* slots) noexcept;

  void addStats(MemoryStats& s) const;

  // OutputCapture (core/kernels/output_capture.h), on the thread running the block: the kernel
  // producing `slot` is about to allocate its result / has produced `result`. Returns
  // the managed index, or -1 when `slot` is not a managed value of this block.
  int32_t beginCapture(uint32_t slot) noexcept;
  // Same, for a kernel running on `slots` (another Runtime's slots, e.g. a fork child
  // run inline on this thread, are never this block's).
  int32_t beginCaptureFor(const c10::IValue* slots, uint32_t slot) noexcept {
    return slots == run_slots_ ? beginCapture(slot) : -1;
  }
  void endCapture(int32_t index, const at::Tensor& result) noexcept;
  // AllocationHook: serves the armed capture; drives the lean profile run.
  void* serve(size_t nbytes) override;
  void allocated(size_t nbytes, void* p) override;
  // The profile run (before the first layout) maps its large allocations: see
  // AllocationHook::mapLarge.
  bool mapLarge(size_t nbytes) override;

 private:
  void freeDeadDuringProfile();
  void releaseSlab();
  bool slowFinish(c10::IValue* slots);
  void replan();
  bool inSlab(const void* p) const {
    auto* b = static_cast<const char*>(slab_.get());
    auto* c = static_cast<const char*>(p);
    return b && c >= b && c < b + slab_bytes_;
  }

  // Per managed value (active ones: evicted values are moved to evicted_slots_).
  std::vector<uint32_t> orig_;  // index into ExecBlock::managed (for conflicts_)
  std::vector<uint32_t> slot_;
  std::vector<uint32_t> first_, last_;
  std::vector<int32_t> group_;     // index into the plan's groups, -1 = not placed
  std::vector<size_t> max_bytes_;  // largest storage size seen
  std::vector<c10::StorageImpl*> cur_;  // scratch for finish()
  // Per group (one storage): offset in the slab and planned bytes.
  std::vector<size_t> offset_, bytes_;
  bool singletons_ = true;  // every group has one managed value
  std::vector<uint32_t> evicted_slots_;  // cleared after every run, never placed

  c10::DataPtr slab_;
  size_t slab_bytes_ = 0;
  size_t lower_bound_ = 0;
  size_t placed_ = 0;
  bool planned_ = false;
  uint64_t plans_ = 0, replans_ = 0, evictions_ = 0;

  // Capture of allocating kernels' outputs, per managed value: the ordinal (in the
  // kernel call's allocation sequence) and size of the allocation that became the
  // result; kLearn = learn on the next call, kNever = its result is not capturable.
  static constexpr int32_t kLearn = -2, kNever = -1;
  std::vector<int32_t> capture_ordinal_;
  std::vector<size_t> capture_bytes_;
  // The call's other allocations (oneDNN's reorder buffers, weights in its layout):
  // the learned sizes of the call's allocation sequence, their total (64-byte aligned,
  // the result excluded) and the slab group planned for them, alive only during the
  // producer's step, so they share bytes with tensors dead by then instead of growing
  // the heap. Only an allocation with the learned ordinal and size is served from it.
  // Group -1: no scratch (none needed, or a parallel block).
  std::vector<std::vector<size_t>> call_sizes_;
  std::vector<size_t> scratch_need_;
  std::vector<int32_t> scratch_group_;
  std::vector<int32_t> index_of_slot_;  // slot -> managed index, -1 = not managed
  void rebuildSlotIndex();
  // The armed call (one at a time per block: kernels run one after another on the
  // block's thread). arm_at_ == null: learning (recording) instead of serving.
  int32_t arm_index_ = -1;
  uint32_t arm_count_ = 0;
  void* arm_at_ = nullptr;
  char* scratch_at_ = nullptr;                          // serving: next free scratch byte
  char* scratch_end_ = nullptr;
  static constexpr uint32_t kRecorded = 32;
  void* rec_ptr_[kRecorded] = {};
  size_t rec_bytes_[kRecorded] = {};
  size_t captured_ = 0, misses_ = 0, scratch_served_ = 0;  // this run
  size_t last_captured_ = 0, last_misses_ = 0, last_scratch_served_ = 0;  // latest finished run
  size_t scratch_bytes_ = 0;  // planned scratch (sum over groups)
  // Running the block: the slots, and the hook this one replaced on the thread.
  c10::IValue* run_slots_ = nullptr;
  AllocationHook* prev_hook_ = nullptr;
  bool hooked_ = false;
  bool force_replan_ = false;  // a new slab is needed (the old one was abandoned)
  // Lean profile run (serial blocks only: under the parallel executor "ran before" is
  // not a step-order fact).
  bool lean_ = true;
  std::vector<uint8_t> freed_;  // per managed value: storage given back this profile run
  size_t profile_live_ = 0, profile_peak_ = 0, profile_total_ = 0;
  // ExecBlock::managed_conflicts (parallel blocks), over ExecBlock::managed indices.
  planners::ConflictFn conflicts_;
  bool plan_scratch_ = true;
  const planners::LayoutAlgorithm* layout_;
};

}  // namespace brisk
