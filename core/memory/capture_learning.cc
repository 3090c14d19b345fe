#include "core/memory/capture_learning.h"

#include <glog/logging.h>

#include <algorithm>

#include "core/memory/capture_allocator.h"

namespace brisk {
namespace {
// c10's CPU allocations are 64-byte aligned; scratch is carved in the same steps.
size_t alignedBytes(size_t n) { return (n + 63) & ~size_t{63}; }
}  // namespace

int32_t CaptureLearner::begin(int32_t i, ManagedRecord& v, const SlabPlan& slab, bool planned) noexcept {
  CaptureRecord& c = v.capture;
  if (c.state == CaptureState::kNever) return -1;
  arm_count_ = 0;
  arm_at_ = nullptr;  // learning
  scratch_at_ = scratch_end_ = nullptr;
  if (c.state == CaptureState::kKnown) {
    // Serve only into this value's own planned region, and only what fits in it.
    if (!planned || v.group < 0 || c.bytes > slab.bytes(v.group)) {
      c.state = CaptureState::kLearn;
    } else {
      arm_at_ = slab.base() + slab.offset(v.group);
      if (const int32_t sg = c.scratch_group; sg >= 0) {
        scratch_at_ = slab.base() + slab.offset(sg);
        scratch_end_ = scratch_at_ + slab.bytes(sg);
        beginScratch(scratch_at_, slab.bytes(sg));
      }
    }
  }
  arm_index_ = i;
  return i;
}

void* CaptureLearner::serveScratch(uint32_t k, size_t nbytes, const std::vector<size_t>& learned) {
  const size_t need = alignedBytes(nbytes);
  if (scratch_at_ && nbytes > 0 && k < learned.size() && learned[k] == nbytes &&
      need <= static_cast<size_t>(scratch_end_ - scratch_at_)) {
    void* p = scratch_at_;
    scratch_at_ += need;
    ++scratch_served_;
    return p;
  }
  return nullptr;
}

// The result is the latest allocation at its address (malloc may have reused the
// address of a temporary freed earlier in the call) of exactly its size.
CaptureLearner::Outcome CaptureLearner::learn(const void* data, size_t nb, CaptureRecord& c) {
  int32_t found = -1;
  const uint32_t seen = std::min(arm_count_, kRecorded);
  for (uint32_t k = 0; k < seen; ++k)
    if (data && rec_ptr_[k] == data && rec_bytes_[k] == nb) found = static_cast<int32_t>(k);
  c.bytes = nb;
  if (found < 0) {
    c.state = CaptureState::kNever;
    return Outcome::kNone;
  }
  c.state = CaptureState::kKnown;
  c.ordinal = static_cast<uint32_t>(found);
  // Everything else the call allocated is its scratch; a need larger than planned
  // (first learning, or shapes grew) lays out the slab again after this run.
  c.call_sizes.assign(rec_bytes_, rec_bytes_ + seen);
  size_t need = 0;
  for (uint32_t k = 0; k < seen; ++k)
    if (static_cast<int32_t>(k) != found) need += alignedBytes(rec_bytes_[k]);
  if (need <= c.scratch_need) return Outcome::kNone;
  c.scratch_need = need;
  return Outcome::kScratchGrew;
}

CaptureLearner::Outcome CaptureLearner::end(const at::Tensor& result, CaptureRecord& c) noexcept {
  const c10::StorageImpl* s =
      result.defined() && result.has_storage() ? result.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl()
                                               : nullptr;
  const void* data = s ? s->data() : nullptr;
  const size_t nb = s ? s->nbytes() : 0;
  Outcome outcome = Outcome::kNone;
  if (!arm_at_) {
    outcome = learn(data, nb, c);
  } else {
    const bool scratch_leaked = scratch_end_ && endScratch() > 0;
    const bool hit = data == arm_at_;
    if (hit) ++captured_;
    else ++misses_;
    if (scratch_leaked || (!hit && servedAllocationLive(arm_at_))) {
      // A served buffer that is not the result is still referenced by something that
      // outlives the call: its bytes must never be handed out again.
      LOG(WARNING) << "brisk: a captured allocation outlived its kernel call; capture disabled for this block";
      outcome = Outcome::kOutlived;
    } else if (!hit) {
      c.state = CaptureState::kLearn;  // other allocations this time (shapes changed): learn again
    }
  }
  disarm();
  return outcome;
}

std::vector<int32_t> CaptureLearner::addScratchSpecs(const std::vector<ManagedRecord>& values, bool plan_scratch,
                                                     std::vector<planners::AllocationSpec>& specs) {
  std::vector<int32_t> new_scratch(values.size(), -1);
  scratch_bytes_ = 0;
  if (!plan_scratch) return new_scratch;
  for (size_t i = 0; i < values.size(); ++i) {
    const ManagedRecord& v = values[i];
    if (v.capture.state != CaptureState::kKnown || v.capture.scratch_need == 0) continue;
    new_scratch[i] = static_cast<int32_t>(specs.size());
    planners::AllocationSpec spec{};
    spec.size = v.capture.scratch_need;
    spec.first = spec.last = v.first;
    specs.push_back(spec);
    scratch_bytes_ += v.capture.scratch_need;
  }
  return new_scratch;
}

void CaptureLearner::addStats(MemoryStats& s) const {
  s.captured_outputs += last_captured_;
  s.capture_misses += last_misses_;
  s.scratch_allocations += last_scratch_served_;
  s.scratch_bytes += scratch_bytes_;
}

}  // namespace brisk
