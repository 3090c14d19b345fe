// ops_quantized's dynamic-int8 GEMM (ops_quantized/int8_gemm.h) against its own
// specification, computed here independently: the weight quantized per channel, each row
// of x to uint8 over its range extended to 0, the integer products summed exactly (int64)
// and dequantized in double. The AVX-512 VNNI path and the portable loop must give the
// same bits; against the fp32 product on the unquantized weight, the error must stay
// within the rounding bound of the two quantizations.
#include "ops_quantized/int8_gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace brisk::ops_quantized {
namespace {

struct Case {
  int64_t m, n, k;
};

// Row tails (m % 4), output tails (n % 16, n % 64), inner-size padding (k % 4), and the
// zoo LSTM's and GRU's projections (4 * 48 x 96, 3 * 40 x 24).
const Case kCases[] = {{1, 1, 1},   {1, 16, 4},   {3, 64, 5},   {4, 65, 33},  {5, 130, 70},
                       {9, 200, 129}, {2, 192, 48}, {16, 192, 96}, {1, 120, 24}, {7, 120, 40}};

std::vector<float> randomVector(size_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

struct Quantized {
  float scale;
  int zero_point;
  std::vector<int> q;
};

// The specification's activation quantization of one row.
Quantized quantizeRow(const float* x, int64_t k) {
  float lo = 0.f, hi = 0.f;
  for (int64_t i = 0; i < k; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  Quantized r;
  r.scale = (hi - lo) / 255.f;
  if (!(r.scale > 0.f)) r.scale = 1.f;
  const float inv = 1.f / r.scale;
  r.zero_point = static_cast<int>(std::clamp(std::nearbyint(-lo * inv), 0.f, 255.f));
  for (int64_t i = 0; i < k; ++i)
    r.q.push_back(static_cast<int>(std::clamp(std::nearbyint(x[i] * inv) + r.zero_point, 0.f, 255.f)));
  return r;
}

class Int8GemmTest : public ::testing::TestWithParam<Case> {};

TEST_P(Int8GemmTest, MatchesItsSpecificationAndBoundsTheError) {
  const Case c = GetParam();
  std::mt19937 rng(static_cast<unsigned>(c.m * 1000003 + c.n * 1009 + c.k));
  std::vector<float> w = randomVector(c.n * c.k, rng, 0.2f), bias = randomVector(c.n, rng, 0.5f),
                     x = randomVector(c.m * c.k, rng, 1.f);
  std::fill(w.begin(), w.begin() + c.k, 0.f);  // a zero weight row: scale 1, all-zero q
  if (c.m > 2) std::fill(x.begin() + c.k, x.begin() + 2 * c.k, 0.f);  // a zero input row
  if (c.m > 3)
    for (int64_t i = 0; i < c.k; ++i) x[3 * c.k + i] = std::fabs(x[3 * c.k + i]) + 0.5f;  // positive only: zp 0

  const Int8Linear lin(w.data(), c.n, c.k, bias.data());
  const std::vector<float> wd = lin.dequantizedWeight();
  std::vector<uint8_t> scratch(lin.scratchBytes(c.m));
  std::vector<float> y(c.m * c.n, NAN), y_portable(c.m * c.n, NAN);
  lin.run(x.data(), c.m, y_portable.data(), scratch.data(), /*vnni=*/false);
  if (Int8Linear::hasVnni()) {
    lin.run(x.data(), c.m, y.data(), scratch.data(), /*vnni=*/true);
    EXPECT_EQ(std::memcmp(y.data(), y_portable.data(), y.size() * sizeof(float)), 0)
        << "the VNNI path and the portable loop differ";
  } else {
    y = y_portable;
  }

  for (int64_t j = 0; j < c.n; ++j) {
    float amax = 0.f;
    for (int64_t i = 0; i < c.k; ++i) amax = std::max(amax, std::fabs(w[j * c.k + i]));
    const float sw = amax > 0.f ? amax / 127.f : 1.f;
    for (int64_t i = 0; i < c.k; ++i) {
      const float q = std::clamp(std::nearbyint(w[j * c.k + i] / sw), -127.f, 127.f);
      ASSERT_EQ(wd[j * c.k + i], q * sw) << "weight " << j << "," << i;
    }
  }
  for (int64_t r = 0; r < c.m; ++r) {
    const float* xr = x.data() + r * c.k;
    const Quantized qx = quantizeRow(xr, c.k);
    double xabs = 0;
    for (int64_t i = 0; i < c.k; ++i) xabs += std::fabs(xr[i]);
    for (int64_t j = 0; j < c.n; ++j) {
      const float* wr = w.data() + j * c.k;
      float amax = 0.f;
      for (int64_t i = 0; i < c.k; ++i) amax = std::max(amax, std::fabs(wr[i]));
      const double sw = amax > 0.f ? amax / 127.0 : 1.0;
      int64_t dot = 0;
      double exact = bias[j], wabs = 0;
      for (int64_t i = 0; i < c.k; ++i) {
        dot += int64_t(qx.q[i] - qx.zero_point) * int64_t(std::lrint(wd[j * c.k + i] / sw));
        exact += double(xr[i]) * wr[i];
        wabs += std::fabs(wr[i]);
      }
      const double spec = double(qx.scale) * sw * double(dot) + bias[j];
      const float got = y[r * c.n + j];
      SCOPED_TRACE("row " + std::to_string(r) + " col " + std::to_string(j));
      EXPECT_NEAR(got, spec, 1e-5 * (std::fabs(spec) + 1.0));
      // Rounding x costs at most s_x / 2 per element, W at most s_w / 2.
      const double bound = 0.5 * sw * xabs + 0.5 * qx.scale * wabs + 0.25 * c.k * qx.scale * sw + 1e-5;
      EXPECT_LE(std::fabs(got - exact), bound);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Int8GemmTest, ::testing::ValuesIn(kCases), [](const auto& info) {
  return "m" + std::to_string(info.param.m) + "n" + std::to_string(info.param.n) + "k" + std::to_string(info.param.k);
});

TEST(Int8Gemm, WithoutBias) {
  const float w[6] = {1.f, -2.f, 0.5f, 0.25f, 3.f, -1.f};  // [2, 3]
  const Int8Linear lin(w, 2, 3, nullptr);
  std::vector<uint8_t> scratch(lin.scratchBytes(2));
  const float x[6] = {1.f, 2.f, 3.f, -1.f, 0.f, 1.f};
  float y[4];
  lin.run(x, 2, y, scratch.data(), false);
  EXPECT_NEAR(y[0], 1.f - 4.f + 1.5f, 0.05f);
  EXPECT_NEAR(y[1], 0.25f + 6.f - 3.f, 0.05f);
  EXPECT_NEAR(y[2], -1.f + 0.5f, 0.05f);
  EXPECT_NEAR(y[3], -0.25f - 1.f, 0.05f);
  if (Int8Linear::hasVnni()) {
    float yv[4];
    lin.run(x, 2, yv, scratch.data(), true);
    EXPECT_EQ(std::memcmp(y, yv, sizeof(y)), 0);
  }
}

}  // namespace
}  // namespace brisk::ops_quantized
