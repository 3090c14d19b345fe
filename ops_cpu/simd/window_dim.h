#pragma once
// One spatial dimension of a sliding window (convolution, pooling), as ATen's ops read
// their arguments: input and output extent, window size, stride, padding at the start,
// dilation. Shared by the direct NCHW kernels (max_pool_nchw.h, depthwise_nchw.h).
#include <cstdint>

namespace brisk::ops_cpu::out {

struct WindowDim {
  int64_t in = 1;
  int64_t out = 1;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t pad = 0;
  int64_t dilation = 1;
};

}  // namespace brisk::ops_cpu::out
