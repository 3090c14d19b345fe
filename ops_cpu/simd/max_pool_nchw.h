#pragma once
// Direct max_pool2d over contiguous NCHW (or CHW) planes: no index tensor, no scratch
// tensors, writes straight into the output. Bit-identical to ATen's CPU kernel
// (aten/src/ATen/native/cpu/MaxPoolKernel.cpp, cpu_max_pool): same window clipping,
// same NaN propagation, same tie-breaking (so even the sign of a zero maximum and the
// payload of a NaN maximum match).
//
// Why it exists: ATen's NCHW kernel tracks an int64 index per output and runs a scalar
// loop with a double-precision isnan per element (4-6 ms for ResNet's 1x64x112x112 on
// this machine, against 0.3-0.5 ms for its channels-last kernel); going through
// channels-last copies instead costs two transposing copies plus scratch tensors held
// per thread (~45 MiB at ResNet-18 batch 8).
//
// Algorithm: a separable maximum per plane. ATen folds each window in row-major order
// with `m = (v > m || isnan(v)) ? v : m` starting from -inf, which selects the FIRST
// maximal element in row-major order, or the LAST NaN if the window holds any. Folding
// each input row horizontally first (over the window's columns) and then the row
// results vertically (over the window's rows), both with the same step, selects the
// same element: the first maximal row holds the first maximal element at its first
// maximal column; the last row with a NaN holds the last NaN at its last NaN column.
// (Vertical-first would pick the leftmost column's topmost maximum instead: equal as a
// number but not always the same bits for +-0 and NaN payloads.)
//   1. Horizontal pass: each input row a window touches is pooled once into a row of
//      out_w values. Interior output columns (whole window inside the row) take
//      `kernel` unaligned vector loads (stride 1) or deinterleaved even-element loads
//      (stride 2; larger strides run scalar); border columns use ATen's clipped
//      scalar loop. Rows are cached in `kernel_h` small slots (an input row shared by
//      overlapping windows, e.g. kernel 3 stride 2, is pooled once).
//   2. Vertical pass: each output row is the elementwise fold of its window's cached
//      rows, written directly into the output.
// Vector width: AVX2 when the CPU has it (checked once), SSE2 otherwise.
// Working memory: kernel_h * out_w values plus bookkeeping, on the stack when small.
#include <cstdint>

#include "ops_cpu/simd/window_dim.h"

namespace brisk::ops_cpu::out {

// One spatial dimension of a pooling window. `out` must be
// maxPoolOutputSize(in, kernel, pad, stride, dilation, ceil_mode).
using PoolDim = WindowDim;

// ATen's pooling_output_shape (aten/src/ATen/native/Pool.h) for validated arguments
// (kernel, stride, dilation > 0; 0 <= pad <= kernel / 2): floor (or ceil) division
// rounding toward -inf, and with ceil_mode the last window must start inside the input
// or its left padding. May return <= 0 (ATen then rejects the input).
int64_t maxPoolOutputSize(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode);

// Pools `planes` consecutive h.in x w.in planes of `in` into `planes` consecutive
// h.out x w.out planes of `out` (both dense row-major). Single-threaded; callers split
// planes across threads. `out` must not overlap `in`.
void maxPool2dPlanes(const float* in, float* out, int64_t planes, const PoolDim& h, const PoolDim& w);
void maxPool2dPlanes(const double* in, double* out, int64_t planes, const PoolDim& h, const PoolDim& w);

}  // namespace brisk::ops_cpu::out
