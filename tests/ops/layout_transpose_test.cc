// ops_cpu/simd/layout_transpose: every element lands where a plain loop puts it, for
// shapes with and without full 8x8 blocks and 64x64 tiles, one image and several.
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

}  // namespace
}  // namespace brisk::ops_cpu::out
