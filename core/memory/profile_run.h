#pragma once
// The lean profile run: in the block's first run every managed tensor is a separate
// allocation and, being retained, would stay alive until the block ends, so that run's
// peak would be the sum of all managed tensors rather than the largest live set.
// Instead, on each large allocation during the profile run of a serial block, managed
// tensors whose last reader has already run (their last step is before the newest
// managed producer that has run) record their size and give their storage back at once.
// Under the parallel executor "ran before" is not a step-order fact: no lean run there.
#include <ATen/core/ivalue.h>

#include <cstddef>
#include <vector>

#include "core/memory/managed_record.h"
#include "core/memory/memory_plan.h"

namespace brisk {

class ProfileRun {
 public:
  // Allocations at least this large trigger the check for dead managed tensors (smaller
  // ones cannot move the peak much; the check is a pass over the block's managed slots).
  static constexpr size_t kLeanCheckBytes = 64 << 10;

  explicit ProfileRun(bool lean) : lean_(lean) {}

  void start(std::vector<ManagedRecord>& values) {
    for (ManagedRecord& v : values) v.freed = false;
  }
  // An allocation of `nbytes` during the profile run, on the block's thread.
  void onAllocation(size_t nbytes, c10::IValue* slots, std::vector<ManagedRecord>& values) {
    if (lean_ && nbytes >= kLeanCheckBytes) freeDead(slots, values);
  }
  // End of the profile run: whatever is still held is live at once now.
  void finish(const c10::IValue* slots, const std::vector<ManagedRecord>& values);
  void addStats(MemoryStats& s) const {
    s.profile_peak_bytes += peak_;
    s.profile_total_bytes += total_;
  }

 private:
  void freeDead(c10::IValue* slots, std::vector<ManagedRecord>& values);

  const bool lean_;
  size_t peak_ = 0, total_ = 0;
};

}  // namespace brisk
