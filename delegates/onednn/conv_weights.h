#pragma once
// One convolution of a partition as oneDNN takes it: geometry, the weight (batch norm
// folded in) packed per blocking (packed_weights.h), and the bias. A conv chain has one;
// a chain with a fused depthwise step (fusion_chain.h) has a second for it.
#include <oneapi/dnnl/dnnl.hpp>

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "delegates/onednn/packed_weights.h"

namespace brisk {
class Node;
class Value;
}  // namespace brisk

namespace brisk::onednn {

struct ConvWeights {
  // `conv` an anchor fusion_chain.h accepts, `bn` its batch norm or null; `releasable`:
  // the constants the partition may free (Partition::releasable).
  ConvWeights(const Node& conv, const Node* bn, const std::vector<const Value*>& releasable);

  int64_t outSize(int64_t in, size_t d) const;
  // oneDNN's logical weight dims: a leading group dim for grouped convolutions.
  dnnl::memory::dims weightDims() const;

  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1, out_channels = 0, in_channels = 0, kh = 0, kw = 0;
  std::unique_ptr<PackedWeights> weights;
  at::Tensor bias;  // undefined: none
  dnnl::memory::desc bias_md;
  dnnl::memory bias_mem;
};

}  // namespace brisk::onednn
