#include "delegates/onednn/folded_float_weight.h"

#include <c10/core/CPUAllocator.h>

#include <cstring>
#include <stdexcept>

#include "core/graph/quantized_decomposed.h"
#include "delegates/onednn/packed_weights.h"

namespace brisk::onednn {

FoldedFloatWeight::FoldedFloatWeight(const Value* weight, const Graph::FoldedFrom& from, bool releasable)
    : dense_(weight->constant().toTensor()), from_(from) {
  // Only a weight that owns its whole storage, densely: the fold's result always does,
  // and then recomputing it rewrites every byte another view could see.
  if (!releasable || !dense_.is_contiguous() || dense_.storage_offset() != 0 ||
      dense_.storage().nbytes() != dense_.nbytes() || !quantizedOpFor(from_.op))
    return;
  dropStorageBytes(dense_);
  released_ = true;
}

void FoldedFloatWeight::restore() {
  if (pinned_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (released_) {
    const at::Tensor value = runQuantizedDecomposed(*quantizedOpFor(from_.op), from_.args, from_.op).contiguous();
    if (value.scalar_type() != dense_.scalar_type() || !value.sizes().equals(dense_.sizes()))
      throw std::runtime_error("onednn: the float weight recomputed from " + from_.op + " does not match the fold's");
    c10::DataPtr bytes = c10::GetCPUAllocator()->allocate(dense_.storage().nbytes());
    std::memcpy(bytes.get(), value.data_ptr(), dense_.storage().nbytes());
    dense_.storage().unsafeGetStorageImpl()->set_data_ptr_noswap(std::move(bytes));
    released_ = false;
  }
  pinned_.store(true, std::memory_order_release);
}

bool FoldedFloatWeight::released() const {
  std::lock_guard<std::mutex> lock(mu_);
  return released_;
}

}  // namespace brisk::onednn
