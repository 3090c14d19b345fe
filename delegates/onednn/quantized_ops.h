#pragma once
// The compiled partitions of PT2E quantized chains (quantized_chain.h): one oneDNN int8
// convolution, matmul or uint8 max pooling each, with the program's own int8 weights and quantization
// parameters (int8_attr.h).
#include <algorithm>
#include <memory>

#include "core/kernels/delegate.h"
#include "delegates/onednn/quantized_chain.h"

namespace brisk::onednn {

// Whether the partition may free constant `v`'s bytes (Partition::releasable).
inline bool isReleasable(const Partition& p, const Value* v) {
  return std::find(p.releasable.begin(), p.releasable.end(), v) != p.releasable.end();
}

struct Int8ConvOptions {
  bool own_depthwise = true;  // a 3x3 depthwise chain may run on brisk's kernel (onednn.int8_depthwise)
  bool autotune = true;       // time oneDNN's candidates per shape (onednn.int8_autotune, impl_timing.h)
};

// `nhwc_output`: every reader takes a channels-last result (layout_flow.h).
std::unique_ptr<CompiledPartition> compileQuantizedConv(const QuantizedChain& chain, const Partition& p,
                                                        bool nhwc_output, const Int8ConvOptions& options);
std::unique_ptr<CompiledPartition> compileQuantizedLinear(const QuantizedChain& chain, const Partition& p);
std::unique_ptr<CompiledPartition> compileQuantizedMaxPool(const QuantizedMaxPool& pool, const Partition& p,
                                                           bool nhwc_output);

}  // namespace brisk::onednn
