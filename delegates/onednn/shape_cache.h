#pragma once
// What a partition prepares once per input shape and keeps: a oneDNN primitive with its
// packed weight (dnnl_conv.h), or a weight reordered for a row count (fused_linear.cc).
// oneDNN picks a kernel, and with it the weight's blocking (Acdb8a, Acdb24a, ...), by
// the whole problem, batch and spatial sizes included, so a weight packed for one shape
// would be reordered again inside every call with another.
//
// At most kSlots shapes are kept (a model serves a few). Further shapes build their
// entry on every call into the caller's `overflow`: correct, slow, and said once in the
// log.
//
// Shared by every Runtime of the Module: lookups read published slots with acquire loads
// and take no lock; only a miss (a new shape) takes the mutex to build and publish.
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include <c10/util/ArrayRef.h>

namespace brisk::onednn {

// Logs, once per process, that a partition met more shapes than it keeps.
void warnShapeOverflow(size_t slots);

template <class T>
class ShapeCache {
 public:
  static constexpr size_t kSlots = 4;
  static constexpr size_t kMaxDims = 5;  // a blocked activation (fused_conv.cc) has 5
  using Build = std::function<std::unique_ptr<const T>(c10::IntArrayRef sizes)>;

  explicit ShapeCache(Build build) : build_(std::move(build)) {}

  // The entry for `sizes` (at most kMaxDims dims), built on the first call with them.
  // *slot is its index, stable for the cache's life (kSlots: it lives in `overflow`,
  // which the caller owns, and is rebuilt on the next such call).
  const T& get(c10::IntArrayRef sizes, std::unique_ptr<const T>& overflow, size_t* slot) const {
    size_t n = published_.load(std::memory_order_acquire);
    if (const T* e = find(sizes, n, slot)) return *e;
    if (sizes.size() <= kMaxDims) {
      std::lock_guard<std::mutex> lock(mu_);
      n = published_.load(std::memory_order_relaxed);
      if (const T* e = find(sizes, n, slot)) return *e;  // another Runtime built it meanwhile
      if (n < kSlots) {
        Slot& s = slots_[n];
        s.entry = build_(sizes);
        s.dims = sizes.size();
        std::copy(sizes.begin(), sizes.end(), s.sizes.begin());
        published_.store(n + 1, std::memory_order_release);
        *slot = n;
        return *s.entry;
      }
    }
    warnShapeOverflow(kSlots);
    overflow = build_(sizes);
    *slot = kSlots;
    return *overflow;
  }
  size_t shapes() const { return published_.load(std::memory_order_acquire); }
  // How many of the kept entries satisfy `pred` (brisk inspect's details).
  template <class Pred>
  size_t count(Pred pred) const {
    const size_t n = published_.load(std::memory_order_acquire);
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) k += pred(*slots_[i].entry) ? 1 : 0;
    return k;
  }

 private:
  struct Slot {
    std::array<int64_t, kMaxDims> sizes{};
    size_t dims = 0;
    std::unique_ptr<const T> entry;
  };
  // The entry for `sizes` among the first n slots, its index in *slot; null when none.
  const T* find(c10::IntArrayRef sizes, size_t n, size_t* slot) const {
    for (size_t i = 0; i < n; ++i)
      if (matches(slots_[i], sizes)) {
        *slot = i;
        return slots_[i].entry.get();
      }
    return nullptr;
  }
  static bool matches(const Slot& s, c10::IntArrayRef sizes) {
    if (s.dims != sizes.size()) return false;
    for (size_t i = 0; i < s.dims; ++i)
      if (s.sizes[i] != sizes[i]) return false;
    return true;
  }

  Build build_;
  mutable std::array<Slot, kSlots> slots_;
  mutable std::atomic<size_t> published_{0};
  mutable std::mutex mu_;
};

}  // namespace brisk::onednn
