#pragma once
// Direct max_pool2d over a channels-last (NHWC) float input: no index tensor, no scratch,
// writes straight into a channels-last output. Bit-identical to ATen's channels-last CPU
// kernel (aten/src/ATen/native/cpu/MaxPoolKernel.cpp, cpu_max_pool_channels_last).
//
// Why it exists: ATen's only CPU max-pool entry computes int64 indices too. Behind a
// oneDNN convolution partition the activations are channels-last, and ResNet-18's stem
// pool at batch 8 then writes 12.8 MB of indices a call into a buffer that stays
// resident for the life of the process (the values alone are 6.4 MB).
//
// Semantics copied from ATen: each output channel folds its window in row-major order,
// starting from -inf, with `m = (v > m || isnan(v)) ? v : m`: the first maximal element,
// or the last NaN. Windows are clipped to the input exactly as ATen clips them (padded
// positions skipped by whole dilation steps). Channels are the vector dimension (AVX2:
// 8 floats a register, up to four registers held across the window), the tail scalar.
#include <cstdint>

#include "ops_cpu/simd/window_dim.h"

namespace brisk::ops_cpu::out {

// Pools output rows [row_begin, row_end) of a batch, row r = n * h.out + oh, from `in`
// (N x h.in x w.in x channels, dense) into `out` (N x h.out x w.out x channels, dense).
// `h.out`/`w.out` must be ATen's output sizes for the arguments. Single-threaded;
// callers split rows across threads. `out` must not overlap `in`.
void maxPool2dNhwcRows(const float* in, float* out, int64_t channels, const WindowDim& h, const WindowDim& w,
                       int64_t row_begin, int64_t row_end);

}  // namespace brisk::ops_cpu::out
