#pragma once
// Global average pooling (adaptive_avg_pool2d to 1x1) over a channels-last (NHWC) float
// input: per image, the mean of its H*W rows of `channels` contiguous floats.
//
// Why it exists: behind a oneDNN convolution partition the activations are NHWC, and
// ATen computes this pool as a mean over the two strided spatial dimensions, which its
// reduction runs slowly: MobileNetV2's head, 1280 channels at 7x7, took 76 us on one Zen
// 4 core, here a few. Sums run in image row order (channels as the vector dimension),
// not in ATen's cascade: values agree to rounding, not bit for bit.
#include <cstdint>

namespace brisk::ops_cpu::out {

// out[n * channels + c] = mean over p < hw of in[(n * hw + p) * channels + c].
// Single-threaded. `out` must not overlap `in`.
void globalAvgPoolNhwc(const float* in, float* out, int64_t batch, int64_t hw, int64_t channels);

}  // namespace brisk::ops_cpu::out
