#pragma once
// The kernels of the nodes linear_rewrite.h creates. Both pack the weight at load
// through libtorch's own quantized ops, which run fbgemm (exported by libtorch_cpu):
//   ops_quantized::linear_fp16          quantized::linear_prepack_fp16 (weights rounded
//       to fp16, clamped to +-65504, packed in fbgemm's blocked layout); per call fbgemm's
//       fp16 x fp32 GEMM with fp32 accumulation, written into the planned output
//       (out-variant: no allocation in steady state)
//   ops_quantized::linear_int8_dynamic  weights quantized per output channel to int8
//       (symmetric: scale = max |w| / 127, zero point 0) and packed by
//       quantized::linear_prepack; per call quantized::linear_dynamic's path: the input
//       quantized to uint8 over its own min / max (8 bits where fbgemm has its AVX-512
//       VNNI kernels, which accumulate u8 x s8 products in int32; 7 bits elsewhere --
//       reduce_range -- so the AVX2 kernels' pairwise int16 sums cannot saturate), the
//       int32 GEMM, then dequantized with the bias added. Its result is a fresh tensor (fbgemm's int8
//       path has no out form), so the node is a native kernel.
// Inputs that are not fp32 take ATen's linear on the fp32 weight: the same result or
// error as the unquantized model.
#include "core/kernels/plugin.h"

namespace brisk::ops_quantized {

// Whether this CPU runs fbgemm's kernels (AVX2 + FMA + F16C): without them the pass
// leaves the model in fp32.
bool fbgemmRuns();

// Whether int8_dynamic quantizes activations to 7 bits (true) or 8.
bool int8ReduceRange();

void registerLinearKernels(PluginRegistrar& r);

}  // namespace brisk::ops_quantized
