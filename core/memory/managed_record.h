#pragma once
// What BlockMemory knows about one managed value of a running block: one record per
// value, so evicting a value (BlockMemory::dropEvicted) moves all of it at once.
#include <c10/core/StorageImpl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace brisk {

// Whether the allocation that becomes the producer's result is known (capture_learning.h).
enum class CaptureState : uint8_t {
  kLearn,  // learn it on the producer's next call
  kKnown,  // allocation `ordinal` of the call, of `bytes`: served at the value's offset
  kNever,  // the result is not one of the call's allocations, or capture is off
};

struct CaptureRecord {
  CaptureState state = CaptureState::kLearn;
  uint32_t ordinal = 0;  // in the call's allocation sequence
  size_t bytes = 0;
  // The call's other allocations (oneDNN's reorder buffers, weights in its layout): the
  // learned sizes of the whole sequence and the total of all but the result (64-byte
  // aligned). They get a slab group alive only during the producer's step, so they
  // share bytes with tensors dead by then instead of growing the heap.
  std::vector<size_t> call_sizes;
  size_t scratch_need = 0;
  int32_t scratch_group = -1;  // -1: no scratch (none needed, or a parallel block)
};

struct ManagedRecord {
  uint32_t orig;         // index into ExecBlock::managed (the parallel conflict relation's)
  uint32_t slot;
  uint32_t first, last;  // producer's step, last step reading it or an alias
  int32_t group = -1;    // slab group (one per storage); -1 = not placed
  size_t max_bytes = 0;  // largest storage size seen
  c10::StorageImpl* cur = nullptr;  // BlockMemory::finish's scratch
  bool freed = false;    // the lean profile run gave its storage back this run
  CaptureRecord capture;
};

}  // namespace brisk
