#pragma once
// Run time: one block's managed tensors in one Runtime (the scheme is described in
// memory_plan.h). BlockMemory coordinates the pieces: the slab and its layout
// (slab_plan.h, regroup.h), capture of allocating kernels' outputs
// (capture_learning.h) and the lean profile run (profile_run.h). Not thread-safe (a
// Runtime runs on one thread at a time).
#include <ATen/core/ivalue.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/memory/capture_allocator.h"
#include "core/memory/capture_learning.h"
#include "core/memory/managed_record.h"
#include "core/memory/memory_plan.h"
#include "core/memory/profile_run.h"
#include "core/memory/slab_plan.h"
#include "planners/layout.h"

namespace brisk {

struct ExecBlock;
struct Regrouping;

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

  // OutputCapture (core/kernels/output_capture.h), on the thread running the block: the
  // kernel producing `slot` is about to allocate its result / has produced `result`.
  // Returns the managed index, or -1 when `slot` is not a managed value of this block.
  int32_t beginCapture(uint32_t slot) noexcept;
  // Same, for a kernel running on `slots` (another Runtime's slots, e.g. a fork child
  // run inline on this thread, are never this block's).
  int32_t beginCaptureFor(const c10::IValue* slots, uint32_t slot) noexcept {
    return slots == run_slots_ ? beginCapture(slot) : -1;
  }
  void endCapture(int32_t index, const at::Tensor& result) noexcept;
  // AllocationHook: serves the armed capture; drives the lean profile run.
  void* serve(size_t nbytes) override {
    if (capture_.serving()) return capture_.serve(nbytes, values_[capture_.armedIndex()].capture);
    capture_.count();
    if (phase_ == Phase::kProfiling) profile_.onAllocation(nbytes, run_slots_, values_);
    return nullptr;
  }
  void allocated(size_t nbytes, void* p) override { capture_.allocated(nbytes, p); }
  // The profile run (before the first layout) maps its large allocations: see
  // AllocationHook::mapLarge.
  bool mapLarge(size_t nbytes) override;

 private:
  // kProfiling --layOut--> kPlanned --requestReplan--> kReplanning --layOut--> kPlanned.
  // kProfiling: the first run; kernels allocate as usual, no slab yet. kPlanned: managed
  // storages are served from the slab. kReplanning: the slab (possibly abandoned) must be
  // laid out again after this run whatever the tensors' sizes.
  enum class Phase : uint8_t { kProfiling, kPlanned, kReplanning };

  void requestReplan() {
    if (phase_ == Phase::kPlanned) phase_ = Phase::kReplanning;
  }
  bool slowFinish(c10::IValue* slots);
  // Drops the values regroup() marked for eviction (their slots are cleared every run);
  // true when there were any.
  bool dropEvicted(c10::IValue* slots, Regrouping& r);
  void unhook();
  void rebuildSlotIndex();

  Phase phase_ = Phase::kProfiling;
  std::vector<ManagedRecord> values_;  // active values only
  std::vector<int32_t> index_of_slot_;  // slot -> index into values_, -1 = not managed
  std::vector<uint32_t> evicted_slots_;  // cleared after every run, never placed
  uint64_t evictions_ = 0;
  SlabPlan slab_;
  CaptureLearner capture_;
  ProfileRun profile_;
  bool plan_scratch_;  // scratch groups are planned (serial blocks, the option)
  // Running the block: the slots, and the hook this one replaced on the thread.
  c10::IValue* run_slots_ = nullptr;
  AllocationHook* prev_hook_ = nullptr;
  bool hooked_ = false;
};

}  // namespace brisk
