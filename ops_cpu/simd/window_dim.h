#pragma once
// One spatial dimension of a sliding window (convolution, pooling), as ATen's ops read
// their arguments: input and output extent, window size, stride, padding at the start,
// dilation. Shared by the direct kernels (max_pool_nchw.h, max_pool_nhwc.h,
// depthwise_nchw.h).
#include <algorithm>
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

// ATen's pooling window of output index o in one dimension: [begin, end) stepping by
// dilation; padded positions are skipped by whole dilation steps (as ATen's
// `while (i0 < 0)`), so the window may be empty (its maximum is then -inf, as ATen's).
struct Window {
  int64_t begin;
  int64_t end;
};
inline __attribute__((always_inline)) Window windowAt(const WindowDim& d, int64_t o) {
  int64_t b = o * d.stride - d.pad;
  const int64_t e = std::min(b + (d.kernel - 1) * d.dilation + 1, d.in);
  while (b < 0) b += d.dilation;  // pad <= kernel / 2: a few steps at most
  return {b, e};
}

}  // namespace brisk::ops_cpu::out
