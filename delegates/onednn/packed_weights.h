#pragma once
// A constant weight in the blocked formats oneDNN's primitives ask for, one copy per
// format rather than per input shape, and the dense weight kept beside it only when
// something may still read it.
//
// oneDNN picks a kernel, and with it the weight's blocking, from the whole problem: for
// the same resnet18 convolution brgconv asks for Acdb16a at batch 1 and Acdb24a at batch
// 8, and a kernel handed a blocking it did not choose falls back to oneDNN's reference
// convolution (measured: 11-19 of resnet18's 20 convolutions ran `ref:any`). So a
// weight cannot be packed once for every shape; but shapes that ask for the same
// blocking (most batch sizes of one model) share one packed copy here.
//
// The dense weight, after the first packing (later formats are reordered from the
// first packed copy):
//   kShared      the graph's tensor, which other nodes read: kept as it is;
//   kOwned       made by the partition (a batch norm folded in): dropped;
//   kReleasable  the graph's tensor, read by nothing but the partition's nested block
//                (core/kernels/releasable_constants.h): its bytes are freed, and put
//                back by restoreDense() before the nested block may run: bit for bit
//                from an fp32 packed copy, rounded to bf16 from a bf16 one (the bf16
//                mode's weights are bf16 everywhere).
//
// Thread-safe: shapes are prepared by whichever Runtime meets them first.
#include <oneapi/dnnl/dnnl.hpp>

#include <ATen/core/Tensor.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace brisk::onednn {

// Gives the whole pages inside [p, p + n) back to the kernel before the caller frees or
// drops the buffer (packed_weights.cc says why).
void discardPages(void* p, size_t n);

// Gives back the bytes of `t`'s whole storage, which keeps its size: every tensor over
// it (the graph's constant, the nested block's slots) sees bytes again once the owner
// sets a new data pointer (set_data_ptr_noswap) before anything reads them.
void dropStorageBytes(const at::Tensor& t);

class PackedWeights {
 public:
  enum class Dense { kShared, kOwned, kReleasable };
  // `dense` is the weight in the plain layout `plain` describes (oihw, goihw, ...).
  PackedWeights(at::Tensor dense, const dnnl::memory::desc& plain, Dense dense_kind);
  // The weight in the layout `md` describes, packed on the first request for it.
  dnnl::memory get(const dnnl::memory::desc& md);
  // Makes the dense weight's bytes readable for good (a kReleasable one freed earlier is
  // rebuilt from the first packed copy, above). Call before the nested block runs. Cheap
  // after the first call: one atomic load.
  void restoreDense();
  // Packed copies kept, and whether the dense bytes are freed now (brisk inspect).
  size_t formats() const;
  bool denseReleased() const;

 private:
  void releaseDense();  // with mu_ held, after the first packing

  mutable std::mutex mu_;
  at::Tensor dense_;     // null once dropped (kOwned)
  Dense kind_;
  dnnl::memory::desc plain_;
  dnnl::memory source_;  // what a new format is reordered from: dense_, then packed_[0]
  std::vector<dnnl::memory> packed_;
  bool released_ = false;          // kReleasable: the storage has no bytes now
  std::atomic<bool> pinned_{false};  // restoreDense ran: the bytes stay from now on
};

}  // namespace brisk::onednn
