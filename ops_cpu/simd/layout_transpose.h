#pragma once
// Float plane transposes for layout changes at the edges of channels-last regions:
// NCHW -> NHWC is, per image, a C x HW matrix transposed to HW x C; NHWC -> NCHW the
// reverse. Pure copies, so the result is bit for bit the source.
//
// Why it exists: the onednn backend converts each partition's NCHW input and, where a
// reader needs it, its NHWC result. oneDNN's reorder (`jit:uni`) measured 1.4-1.8x
// slower than this kernel's AVX2 8x8 blocks on one Zen 3 core (64 x 784 floats: 11.2 vs
// 7.4 µs; 48 x 784: 8.1 vs 5.1 µs; hot cache), and these conversions are a sixth of
// inception_nofork's time.
#include <cstdint>

namespace brisk::ops_cpu::out {

// For each of `batch` images: dst[c * rows + r] = src[r * cols + c] (both dense).
// Single-threaded. `dst` must not overlap `src`.
void transposePlanes(const float* src, float* dst, int64_t batch, int64_t rows, int64_t cols);

}  // namespace brisk::ops_cpu::out
