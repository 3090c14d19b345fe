#include "delegates/onednn/packed_weights.h"

#include <c10/core/CPUAllocator.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

#include "delegates/onednn/dnnl_runtime.h"

namespace brisk::onednn {
namespace {

void reorderNow(dnnl::memory from, dnnl::memory to) {  // handles: execute() takes them by non-const reference
  dnnl::stream s(cpuEngine());
  dnnl::reorder(from, to).execute(s, from, to);
  s.wait();
}

}  // namespace

// Whole pages only. free() alone leaves a chunk in the middle of the heap resident (glibc returns
// memory only from the heap's top, or on malloc_trim), so the first call's packing
// would hold both copies at once at its peak. The buffer is still ours while we do it,
// so nothing else can be using those pages; a later allocation that reuses them reads
// zeros, which malloc never promised otherwise.
void discardPages(void* p, size_t n) {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(page - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void dropStorageBytes(const at::Tensor& t) {
  discardPages(t.storage().mutable_data(), t.storage().nbytes());
  t.storage().unsafeGetStorageImpl()->set_data_ptr_noswap(c10::DataPtr(nullptr, t.device()));
}

PackedWeights::PackedWeights(at::Tensor dense, const dnnl::memory::desc& plain, Dense dense_kind)
    : dense_(dense.contiguous()), kind_(dense_kind), plain_(plain), source_(plain, cpuEngine(), dense_.data_ptr()) {
  // A copy (non-contiguous input) is the partition's own, whatever the caller said.
  if (!dense_.is_same(dense)) kind_ = Dense::kOwned;
}

dnnl::memory PackedWeights::get(const dnnl::memory::desc& md) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const dnnl::memory& m : packed_)
    if (m.get_desc() == md) return m;
  dnnl::memory m(md, cpuEngine());
  reorderNow(source_, m);
  packed_.push_back(m);
  if (packed_.size() == 1) releaseDense();
  return m;
}

void PackedWeights::releaseDense() {
  if (kind_ == Dense::kShared) return;
  source_ = packed_.front();
  if (kind_ == Dense::kOwned) {
    discardPages(dense_.data_ptr(), dense_.nbytes());  // nothing else holds it
    dense_ = at::Tensor();
  } else if (!pinned_.load(std::memory_order_relaxed)) {
    // Every tensor over the storage sees the bytes again after restoreDense().
    dropStorageBytes(dense_);
    released_ = true;
  }
}

void PackedWeights::restoreDense() {
  if (pinned_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (released_) {
    c10::DataPtr bytes = c10::GetCPUAllocator()->allocate(dense_.storage().nbytes());
    reorderNow(packed_.front(), dnnl::memory(plain_, cpuEngine(), bytes.get()));
    dense_.storage().unsafeGetStorageImpl()->set_data_ptr_noswap(std::move(bytes));
    released_ = false;
  }
  pinned_.store(true, std::memory_order_release);
}

size_t PackedWeights::formats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return packed_.size();
}

bool PackedWeights::denseReleased() const {
  std::lock_guard<std::mutex> lock(mu_);
  return released_;
}

}  // namespace brisk::onednn
