#pragma once
// Weights in the blocked format oneDNN's kernel wants for one input shape. oneDNN picks
// a convolution kernel (and with it the weight's blocking: Acdb8a, Acdb24a, Acdb32a...)
// by the whole problem, batch and spatial sizes included; a weight packed for another
// shape is reordered again inside every call, which costs more than the convolution.
// So a partition packs its weight once per input shape it meets, and keeps at most
// kSlots of them (a model serves a few shapes; more shapes pack per call, correct but
// slow, and say so once in the log).
//
// Shared by every Runtime of the Module: lookups read published slots with acquire loads
// and take no lock; only a miss (a new shape) takes the mutex to pack and publish.
#include <ATen/core/ivalue.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>

#include <c10/util/ArrayRef.h>

namespace brisk::onednn {

class PackedWeightCache {
 public:
  static constexpr size_t kSlots = 4;
  static constexpr size_t kMaxDims = 4;
  using Pack = std::function<c10::IValue(c10::IntArrayRef input_sizes)>;

  explicit PackedWeightCache(Pack pack) : pack_(std::move(pack)) {}

  // The weight packed for `sizes` (an input of at most kMaxDims dims); packs it on the
  // first call with these sizes. The returned reference stays valid for the cache's life
  // (a slot never changes once published); beyond kSlots shapes the result lives in
  // `overflow`, which the caller owns.
  const c10::IValue& get(c10::IntArrayRef sizes, c10::IValue& overflow) const;
  size_t shapes() const { return published_.load(std::memory_order_acquire); }

 private:
  struct Slot {
    std::array<int64_t, kMaxDims> sizes{};
    size_t dims = 0;
    c10::IValue weight;
  };
  bool matches(const Slot& s, c10::IntArrayRef sizes) const;

  Pack pack_;
  mutable std::array<Slot, kSlots> slots_;
  mutable std::atomic<size_t> published_{0};
  mutable std::mutex mu_;
};

}  // namespace brisk::onednn
