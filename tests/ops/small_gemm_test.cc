// brisk's packed-weight GEMM (ops_cpu/simd/small_gemm.h) on its own: every result must
// be the documented order of operations bit for bit (a +0 start, one fused multiply-add
// per k in ascending order, then the bias), whatever the shape, strides, panel split,
// tile a row or column falls into, or depth pass; nothing outside the output is written.
#include "ops_cpu/simd/small_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace brisk::ops_cpu::out {
namespace {

struct Case {
  int64_t m, k, n;
  bool bias;
  int64_t ldx_pad = 0, ldy_pad = 0;  // extra floats per row of x and y
};

// The documented order, one output at a time. w is linear's weight [N, K].
std::vector<float> reference(const Case& c, const std::vector<float>& x, int64_t ldx, const std::vector<float>& w,
                             const std::vector<float>& b) {
  std::vector<float> y(c.m * c.n);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      float acc = 0.0f;
      for (int64_t kk = 0; kk < c.k; ++kk) acc = std::fma(x[i * ldx + kk], w[j * c.k + kk], acc);
      y[i * c.n + j] = c.bias ? acc + b[j] : acc;
    }
  return y;
}

std::vector<float> randomVector(size_t n, std::mt19937& g) {
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (float& f : v) f = d(g);
  return v;
}

bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Runs one case with the panels split as `splits` (boundaries in panels, ascending;
// empty = all at once) and checks every output bit and every guard value.
void check(const Case& c, std::mt19937& g, const std::vector<int64_t>& splits = {}) {
  SCOPED_TRACE("m=" + std::to_string(c.m) + " k=" + std::to_string(c.k) + " n=" + std::to_string(c.n) +
               " bias=" + std::to_string(c.bias) + " ldx_pad=" + std::to_string(c.ldx_pad) +
               " ldy_pad=" + std::to_string(c.ldy_pad));
  const int64_t ldx = c.k + c.ldx_pad, ldy = c.n + c.ldy_pad;
  const std::vector<float> x = randomVector(c.m * ldx, g), w = randomVector(c.n * c.k, g), b = randomVector(c.n, g);
  const std::vector<float> x0 = x, w0 = w, b0 = b;
  // Packed from linear's [N, K] layout: W^T[kk][j] = w[j * K + kk].
  std::vector<float> packed(smallGemmPackedSize(c.k, c.n));
  smallGemmPack(w.data(), 1, c.k, c.k, c.n, packed.data());
  constexpr float kGuard = -12345.0f;
  std::vector<float> y(c.m * ldy + 16, kGuard);
  const int64_t panels = smallGemmPanels(c.n);
  int64_t begin = 0;
  for (int64_t end : splits) {
    smallGemm(x.data(), ldx, packed.data(), c.bias ? b.data() : nullptr, y.data(), ldy, c.m, c.k, c.n, begin, end);
    begin = end;
  }
  smallGemm(x.data(), ldx, packed.data(), c.bias ? b.data() : nullptr, y.data(), ldy, c.m, c.k, c.n, begin, panels);

  const std::vector<float> want = reference(c, x, ldx, w, b);
  int bad = 0;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j)
      if (!sameBits(y[i * ldy + j], want[i * c.n + j]) && bad++ < 5)
        ADD_FAILURE() << "y[" << i << "][" << j << "] = " << y[i * ldy + j] << ", want " << want[i * c.n + j];
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = c.n; j < ldy; ++j) EXPECT_EQ(y[i * ldy + j], kGuard) << "row padding written at " << i << "," << j;
  for (size_t t = c.m * ldy; t < y.size(); ++t) EXPECT_EQ(y[t], kGuard) << "written past the output";
  EXPECT_EQ(x, x0);
  EXPECT_EQ(w, w0);
  EXPECT_EQ(b, b0);
}

class SmallGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!smallGemmAvailable()) GTEST_SKIP() << "no AVX2+FMA on this CPU (the kernel is then never used)";
  }
  std::mt19937 g_{20261121};
};

// Rows 1-9 and 12-14 (every tile height, and the 4 + 3 / 4 + 4 splits of 7 and 8 rows
// after a 6-row tile), columns across full and partial vectors, multi-panel tiles and
// panels (N = 1 .. 200), depths including 0, 1 and past one depth pass (256).
TEST_F(SmallGemm, EveryShapeIsTheDocumentedOrder) {
  for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14})
    for (int64_t k : {0, 1, 3, 64, 129, 257})
      for (int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 33, 63, 64, 65, 100, 128, 200})
        for (bool bias : {true, false}) check({m, k, n, bias}, g_);
}

// A linear layer's size at a batch of 64: several depth passes and row tiles.
TEST_F(SmallGemm, BatchSizedShapes) {
  check({64, 600, 70, true}, g_);
  check({67, 513, 40, false}, g_, {1});
}

// A few rows on a long depth: each panel runs all its depth passes in a row (x stays in
// the L2); the bits are the same documented order.
TEST_F(SmallGemm, FewRowsStreamEachPanelWhole) {
  check({8, 1280, 100, true}, g_);
  check({12, 1300, 33, false}, g_);
  check({1, 4000, 70, true}, g_, {1});
}

TEST_F(SmallGemm, StridedRowsLeavePaddingAlone) {
  for (int64_t m : {1, 3, 4, 6})
    for (int64_t n : {5, 40, 70}) check({m, 33, n, true, /*ldx_pad=*/7, /*ldy_pad=*/5}, g_);
}

// Threads split the panels; any split must give the same bits as one call.
TEST_F(SmallGemm, PanelSplitsGiveTheSameBits) {
  check({2, 50, 300, true}, g_, {1});
  check({5, 50, 300, true}, g_, {1, 2, 4});
  check({1, 200, 129, false}, g_, {2});
}

// Packing reads any strides: W given as [K, N] row-major packs to the same panels as
// linear's [N, K].
TEST_F(SmallGemm, PackReadsAnyStrides) {
  const int64_t k = 19, n = 70;
  std::vector<float> w_nk = randomVector(n * k, g_), w_kn(k * n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t kk = 0; kk < k; ++kk) w_kn[kk * n + j] = w_nk[j * k + kk];
  std::vector<float> a(smallGemmPackedSize(k, n)), b(a.size());
  smallGemmPack(w_nk.data(), 1, k, k, n, a.data());
  smallGemmPack(w_kn.data(), n, 1, k, n, b.data());
  EXPECT_EQ(a, b);
  // Four panels of 16 columns, then 6 padded to 16 with zeros.
  EXPECT_EQ(static_cast<int64_t>(a.size()), k * 80);
}

}  // namespace
}  // namespace brisk::ops_cpu::out
