#pragma once
// Capture of allocating kernels' outputs (OutputCapture, core/kernels/output_capture.h):
// the first call of a managed value's producer is watched to learn which allocation in
// the call's sequence becomes the result (and what else the call allocates, its
// scratch); later calls are served that allocation at the value's slab offset, and the
// scratch from the value's scratch group. One armed call at a time per block: kernels
// run one after another on the block's thread.
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/memory/managed_record.h"
#include "core/memory/slab_plan.h"

namespace brisk {

class CaptureLearner {
 public:
  // What the coordinator must do about a finished call.
  enum class Outcome {
    kNone,
    kScratchGrew,  // the call needs more scratch than planned: lay out the slab again
    kOutlived,     // a served buffer outlived the call: abandon the slab, stop capturing
  };

  bool armed() const { return arm_index_ >= 0; }
  // Arms the call producing values[i]; planned: the slab holds a layout. Returns i, or
  // -1 when the value's result is not capturable.
  int32_t begin(int32_t i, ManagedRecord& v, const SlabPlan& slab, bool planned) noexcept;
  // An allocation of the armed call: the address to serve it from, or null. `serving`
  // false: the call is being learned (or none is armed) and nothing is served.
  bool serving() const { return arm_at_ != nullptr; }
  void* serve(size_t nbytes, const CaptureRecord& c) {
    const uint32_t k = arm_count_++;
    if (c.state == CaptureState::kKnown && k == c.ordinal && nbytes == c.bytes) return arm_at_;
    return serveScratch(k, nbytes, c.call_sizes);
  }
  void count() {
    if (armed()) ++arm_count_;
  }
  void allocated(size_t nbytes, void* p) {
    if (!armed() || arm_at_) return;
    const uint32_t k = arm_count_ - 1;  // serve() counted it
    if (k < kRecorded) {
      rec_ptr_[k] = p;
      rec_bytes_[k] = nbytes;
    }
  }
  int32_t armedIndex() const { return arm_index_; }
  Outcome end(const at::Tensor& result, CaptureRecord& c) noexcept;

  // Run boundaries: the counters of the run, and the latest finished run's for stats.
  void startRun() { captured_ = misses_ = scratch_served_ = 0; }
  void finishRun() {
    disarm();
    last_captured_ = captured_;
    last_misses_ = misses_;
    last_scratch_served_ = scratch_served_;
  }
  void disarm() {
    arm_index_ = -1;
    arm_at_ = nullptr;
    scratch_at_ = scratch_end_ = nullptr;
  }
  // Specs (live during the producer's step only) for the scratch of every captured
  // value; new_scratch[i]: values[i]'s index into specs, or -1.
  std::vector<int32_t> addScratchSpecs(const std::vector<ManagedRecord>& values, bool plan_scratch,
                                       std::vector<planners::AllocationSpec>& specs);
  void addStats(MemoryStats& s) const;

 private:
  void* serveScratch(uint32_t k, size_t nbytes, const std::vector<size_t>& learned);
  Outcome learn(const void* data, size_t nb, CaptureRecord& c);

  // The armed call; arm_at_ == null: learning (recording) instead of serving.
  int32_t arm_index_ = -1;
  uint32_t arm_count_ = 0;
  void* arm_at_ = nullptr;
  char* scratch_at_ = nullptr;  // serving: next free scratch byte
  char* scratch_end_ = nullptr;
  static constexpr uint32_t kRecorded = 32;
  void* rec_ptr_[kRecorded] = {};
  size_t rec_bytes_[kRecorded] = {};
  size_t captured_ = 0, misses_ = 0, scratch_served_ = 0;                  // this run
  size_t last_captured_ = 0, last_misses_ = 0, last_scratch_served_ = 0;  // latest finished run
  size_t scratch_bytes_ = 0;  // planned scratch (sum over groups)
};

}  // namespace brisk
