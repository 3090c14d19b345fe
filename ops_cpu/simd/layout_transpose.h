#pragma once
// Float plane transposes for layout changes at the edges of channels-last regions:
// NCHW -> NHWC is, per image, a C x HW matrix transposed to HW x C; NHWC -> NCHW the
// reverse. Pure copies, so the result is bit for bit the source.
//
// Why it exists: the onednn backend converts each partition's NCHW input and, where a
// reader needs it, its NHWC or blocked result. oneDNN's reorder (`jit:uni`) is slower on
// one core: 64 x 784 floats NCHW -> NHWC 9.2 us against 5.3 here, 48 x 784 NHWC -> NCHW
// 21.9 against 4.1 (Zen 4, hot cache; on Zen 3 1.4-1.8x slower).
#include <cstdint>

namespace brisk::ops_cpu::out {

// For each of `batch` images: dst[c * rows + r] = src[r * cols + c] (both dense).
// Single-threaded. `dst` must not overlap `src`.
void transposePlanes(const float* src, float* dst, int64_t batch, int64_t rows, int64_t cols);

// oneDNN's blocked layout nChw{block}c to NCHW: `src` is [batch, ceil(channels / block),
// hw, block] (the padding channels of the last block are skipped), `dst` [batch,
// channels, hw]. oneDNN's own reorder takes a slow path when `channels` is not a
// multiple of `block` (24 channels at 28x28, Zen 4: 10.7 us, against 3.5 for 48).
void unblockPlanes(const float* src, float* dst, int64_t batch, int64_t channels, int64_t hw, int64_t block);

}  // namespace brisk::ops_cpu::out
