#pragma once
// A constant weight in the blocked formats oneDNN's primitives ask for, one copy per
// format rather than per input shape.
//
// oneDNN picks a kernel, and with it the weight's blocking, from the whole problem: for
// the same resnet18 convolution brgconv asks for Acdb16a at batch 1 and Acdb24a at batch
// 8, and a kernel handed a blocking it did not choose falls back to oneDNN's reference
// convolution (measured: 11-19 of resnet18's 20 convolutions ran `ref:any`). So a
// weight cannot be packed once for every shape; but shapes that ask for the same
// blocking (most batch sizes of one model) share one packed copy here.
//
// A dense weight the partition made itself (a batch norm folded in) is released after
// the first packing: later formats are reordered from that packed copy, so the folded
// weight does not stay beside the graph's dense one and the packed one.
//
// Thread-safe: shapes are prepared by whichever Runtime meets them first.
#include <oneapi/dnnl/dnnl.hpp>

#include <ATen/core/Tensor.h>

#include <mutex>
#include <vector>

namespace brisk::onednn {

class PackedWeights {
 public:
  // `dense` is the weight in the plain layout `plain` describes (oihw, goihw, ...);
  // `owned`: the partition made it, so only this object keeps it alive.
  PackedWeights(at::Tensor dense, const dnnl::memory::desc& plain, bool owned);
  // The weight in the layout `md` describes, packed on the first request for it.
  dnnl::memory get(const dnnl::memory::desc& md);
  // Packed copies kept, and their bytes (for brisk inspect).
  size_t formats() const;
  size_t bytes() const;

 private:
  mutable std::mutex mu_;
  at::Tensor dense_;     // null once released (owned weights, after the first packing)
  bool owned_;
  dnnl::memory source_;  // what a new format is reordered from: dense_, then packed_[0]
  std::vector<dnnl::memory> packed_;
};

}  // namespace brisk::onednn
