#include "delegates/onednn/packed_weights.h"

#include <glog/logging.h>

namespace brisk::onednn {

bool PackedWeightCache::matches(const Slot& s, c10::IntArrayRef sizes) const {
  if (s.dims != sizes.size()) return false;
  for (size_t i = 0; i < s.dims; ++i)
    if (s.sizes[i] != sizes[i]) return false;
  return true;
}

const c10::IValue& PackedWeightCache::get(c10::IntArrayRef sizes, c10::IValue& overflow) const {
  size_t n = published_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i)
    if (matches(slots_[i], sizes)) return slots_[i].weight;
  if (sizes.size() <= kMaxDims) {
    std::lock_guard<std::mutex> lock(mu_);
    n = published_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < n; ++i)
      if (matches(slots_[i], sizes)) return slots_[i].weight;
    if (n < kSlots) {
      Slot& s = slots_[n];
      s.dims = sizes.size();
      std::copy(sizes.begin(), sizes.end(), s.sizes.begin());
      s.weight = pack_(sizes);
      published_.store(n + 1, std::memory_order_release);
      return s.weight;
    }
  }
  LOG_FIRST_N(WARNING, 1) << "brisk: onednn: a partition met more than " << kSlots
                          << " input shapes; further shapes pack their weight on every call";
  overflow = pack_(sizes);
  return overflow;
}

}  // namespace brisk::onednn
