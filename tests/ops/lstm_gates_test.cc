// simd/lstm_gates.h: the vector path against std::exp / std::tanh per element, on
// ordinary values, saturating ones, every tail length, and NaN.
#include "ops_cpu/simd/lstm_gates.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace brisk::ops_cpu::out {
namespace {

struct Case {
  std::vector<float> gh, gx, c;
};

Case randomCase(int64_t rows, int64_t hidden, float scale, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, scale);
  Case k;
  for (int64_t i = 0; i < rows * 4 * hidden; ++i) k.gh.push_back(d(rng)), k.gx.push_back(d(rng));
  for (int64_t i = 0; i < rows * hidden; ++i) k.c.push_back(d(rng));
  return k;
}

// Max difference over both outputs, in units of (|reference| + 1e-3): relative for
// ordinary values, absolute near zero.
double maxDiff(const Case& k, int64_t rows, int64_t hidden) {
  std::vector<float> h1(rows * hidden), c1(rows * hidden), h2(rows * hidden), c2(rows * hidden);
  lstmGates(k.gh.data(), k.gx.data(), k.c.data(), h1.data(), c1.data(), rows, hidden);
  lstmGatesScalar(k.gh.data(), k.gx.data(), k.c.data(), h2.data(), c2.data(), rows, hidden);
  double worst = 0;
  for (size_t i = 0; i < h1.size(); ++i) {
    worst = std::max(worst, std::abs(double(h1[i]) - h2[i]) / (std::abs(double(h2[i])) + 1e-3));
    worst = std::max(worst, std::abs(double(c1[i]) - c2[i]) / (std::abs(double(c2[i])) + 1e-3));
  }
  return worst;
}

TEST(LstmGates, VectorPathMatchesStdFunctions) {
  std::mt19937 rng(7);
  for (float scale : {0.05f, 1.0f, 4.0f, 60.0f})
    for (int64_t hidden : {1, 7, 8, 9, 16, 23, 48})
      for (int64_t rows : {1, 3}) {
        const Case k = randomCase(rows, hidden, scale, rng);
        // A few ulp per function, amplified where f c and i g nearly cancel: 10x
        // tighter than the zoo's rtol (1e-4).
        EXPECT_LT(maxDiff(k, rows, hidden), 1e-5) << "scale " << scale << " hidden " << hidden << " rows " << rows;
      }
}

TEST(LstmGates, KnownValuesAndNan) {
  // One row, hidden 8 (one full vector): gate pre-activations 0 give i = f = o = 0.5 and
  // g = 0, so c' = 0.5 c and h' = 0.5 tanh(0.5 c).
  std::vector<float> gh(32, 0.0f), gx(32, 0.0f), c = {0, 1, -1, 2, -3, 10, -100, 1e-4f};
  std::vector<float> h2(8), c2(8);
  lstmGates(gh.data(), gx.data(), c.data(), h2.data(), c2.data(), 1, 8);
  for (int j = 0; j < 8; ++j) {
    EXPECT_FLOAT_EQ(c2[j], 0.5f * c[j]);
    EXPECT_NEAR(h2[j], 0.5 * std::tanh(0.5 * c[j]), 1e-7 + 1e-6 * std::abs(h2[j]));
  }
  // Saturation: huge pre-activations give exactly 0 / 1 gates, no NaN or inf.
  std::fill(gh.begin(), gh.end(), 1e30f);
  lstmGates(gh.data(), gx.data(), c.data(), h2.data(), c2.data(), 1, 8);
  for (int j = 0; j < 8; ++j) EXPECT_FLOAT_EQ(c2[j], c[j] + 1.0f);
  // NaN in one gate comes out NaN in that element's results only, as with std::.
  std::fill(gh.begin(), gh.end(), 0.0f);
  gh[8 + 3] = std::numeric_limits<float>::quiet_NaN();  // f of element 3
  lstmGates(gh.data(), gx.data(), c.data(), h2.data(), c2.data(), 1, 8);
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(std::isnan(c2[j]), j == 3) << j;
    EXPECT_EQ(std::isnan(h2[j]), j == 3) << j;
  }
}

}  // namespace
}  // namespace brisk::ops_cpu::out
