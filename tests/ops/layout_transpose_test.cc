// ops_cpu/simd/layout_transpose: every element lands where a plain loop puts it, for
// shapes with and without full 8x8 blocks and 64x64 tiles, one image and several; and
// the blocked -> NCHW conversion, with whole and partial channel blocks (the padding
// channels never reach the result) and plane sizes with and without whole 16-row blocks.
#include "ops_cpu/simd/layout_transpose.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace brisk::ops_cpu::out {
namespace {

TEST(LayoutTranspose, MatchesAPlainLoop) {
  const int64_t shapes[][3] = {{1, 64, 784}, {2, 48, 784}, {1, 784, 24}, {3, 13, 29}, {1, 1, 9},
                               {2, 9, 1},    {1, 130, 67}, {1, 8, 8},    {4, 3, 50}};
  for (const auto& s : shapes) {
    const int64_t batch = s[0], rows = s[1], cols = s[2], plane = rows * cols;
    std::vector<float> src(batch * plane), dst(batch * plane, -1.0f);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f - 3.0f;
    transposePlanes(src.data(), dst.data(), batch, rows, cols);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          ASSERT_EQ(dst[b * plane + c * rows + r], src[b * plane + r * cols + c])
              << batch << "x" << rows << "x" << cols << " at " << b << "," << r << "," << c;
  }
}

TEST(LayoutTranspose, UnblockMatchesAPlainLoop) {
  const int64_t shapes[][4] = {{1, 48, 784, 16}, {2, 24, 784, 16}, {1, 7, 17, 16}, {3, 33, 5, 16},
                               {1, 16, 1, 16},   {2, 24, 49, 8},   {1, 5, 30, 8},  {1, 40, 16, 16}};
  for (const auto& s : shapes) {
    const int64_t batch = s[0], channels = s[1], hw = s[2], block = s[3], blocks = (channels + block - 1) / block;
    std::vector<float> src(batch * blocks * hw * block), dst(batch * channels * hw + 16, -1.0f);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.25f + 1.0f;
    unblockPlanes(src.data(), dst.data(), batch, channels, hw, block);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t p = 0; p < hw; ++p)
          ASSERT_EQ(dst[(b * channels + c) * hw + p], src[((b * blocks + c / block) * hw + p) * block + c % block])
              << batch << "x" << channels << "x" << hw << " block " << block << " at " << b << "," << c << "," << p;
    for (size_t i = batch * channels * hw; i < dst.size(); ++i) ASSERT_EQ(dst[i], -1.0f) << "wrote past the result";
  }
}

}  // namespace
}  // namespace brisk::ops_cpu::out
