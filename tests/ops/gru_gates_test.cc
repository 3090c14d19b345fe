// simd/gru_gates.h: the vector path against std::exp / std::tanh per element, on
// ordinary values, saturating ones, every tail length, and NaN; and the formula itself
// (PyTorch's r, z, n order) on values worked out by hand.
#include "ops_cpu/simd/gru_gates.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace brisk::ops_cpu::out {
namespace {

struct Case {
  std::vector<float> gh, gx, h;
};

Case randomCase(int64_t rows, int64_t hidden, float scale, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, scale);
  Case k;
  for (int64_t i = 0; i < rows * 3 * hidden; ++i) k.gh.push_back(d(rng)), k.gx.push_back(d(rng));
  for (int64_t i = 0; i < rows * hidden; ++i) k.h.push_back(d(rng));
  return k;
}

// Max difference, in units of (|reference| + |h| + 1e-3): h' = (h - n) z + n cancels
// when n ~ h, so its error is relative to the operands, not to the result.
double maxDiff(const Case& k, int64_t rows, int64_t hidden) {
  std::vector<float> h1(rows * hidden), h2(rows * hidden);
  gruGates(k.gh.data(), k.gx.data(), k.h.data(), h1.data(), rows, hidden);
  gruGatesScalar(k.gh.data(), k.gx.data(), k.h.data(), h2.data(), rows, hidden);
  double worst = 0;
  for (size_t i = 0; i < h1.size(); ++i)
    worst = std::max(worst, std::abs(double(h1[i]) - h2[i]) / (std::abs(double(h2[i])) + std::abs(k.h[i]) + 1e-3));
  return worst;
}

TEST(GruGates, VectorPathMatchesStdFunctions) {
  std::mt19937 rng(11);
  for (float scale : {0.05f, 1.0f, 4.0f, 60.0f})
    for (int64_t hidden : {1, 7, 8, 9, 16, 23, 40})
      for (int64_t rows : {1, 3}) {
        const Case k = randomCase(rows, hidden, scale, rng);
        EXPECT_LT(maxDiff(k, rows, hidden), 1e-5) << "scale " << scale << " hidden " << hidden << " rows " << rows;
      }
}

// The formula, both paths: one row of hidden 9 (a vector and a scalar tail).
TEST(GruGates, FormulaAndGateOrder) {
  const int64_t hd = 9;
  std::vector<float> gh(3 * hd), gx(3 * hd), h(hd), out(hd), ref(hd);
  for (int64_t j = 0; j < hd; ++j) {
    gh[j] = 0.1f * j;            // r: reset, from gh_r + gx_r
    gx[j] = -0.3f;
    gh[hd + j] = -0.2f * j;      // z: update
    gx[hd + j] = 0.4f;
    gh[2 * hd + j] = 0.5f + j;   // gh_n: multiplied by r
    gx[2 * hd + j] = -0.7f;      // gx_n: not
    h[j] = 0.25f * j - 1.0f;
  }
  for (int64_t j = 0; j < hd; ++j) {
    const double r = 1 / (1 + std::exp(-(gh[j] + gx[j])));
    const double z = 1 / (1 + std::exp(-(gh[hd + j] + gx[hd + j])));
    const double n = std::tanh(gx[2 * hd + j] + r * gh[2 * hd + j]);
    ref[j] = static_cast<float>((1 - z) * n + z * h[j]);
  }
  for (bool vec : {true, false}) {
    if (vec)
      gruGates(gh.data(), gx.data(), h.data(), out.data(), 1, hd);
    else
      gruGatesScalar(gh.data(), gx.data(), h.data(), out.data(), 1, hd);
    for (int64_t j = 0; j < hd; ++j) EXPECT_NEAR(out[j], ref[j], 1e-6) << (vec ? "vector " : "scalar ") << j;
  }
}

TEST(GruGates, SaturationAndNan) {
  const int64_t hd = 8;
  std::vector<float> gh(3 * hd, 0.0f), gx(3 * hd, 0.0f), h = {0, 1, -1, 2, -3, 10, -100, 1e-4f}, out(hd);
  // z saturated at 1: h' = h exactly (n = tanh(0) = 0).
  for (int64_t j = 0; j < hd; ++j) gh[hd + j] = 1e30f;
  gruGates(gh.data(), gx.data(), h.data(), out.data(), 1, hd);
  for (int64_t j = 0; j < hd; ++j) EXPECT_EQ(out[j], h[j]) << j;
  // z saturated at 0, n at 1: h' = 1.
  for (int64_t j = 0; j < hd; ++j) gh[hd + j] = -1e30f, gx[2 * hd + j] = 1e30f;
  gruGates(gh.data(), gx.data(), h.data(), out.data(), 1, hd);
  for (int64_t j = 0; j < hd; ++j) EXPECT_EQ(out[j], 1.0f) << j;
  // NaN in one gate comes out NaN in that element only.
  std::fill(gh.begin(), gh.end(), 0.0f);
  std::fill(gx.begin(), gx.end(), 0.0f);
  gh[3] = std::numeric_limits<float>::quiet_NaN();  // r of element 3
  gruGates(gh.data(), gx.data(), h.data(), out.data(), 1, hd);
  for (int64_t j = 0; j < hd; ++j) EXPECT_EQ(std::isnan(out[j]), j == 3) << j;
}

}  // namespace
}  // namespace brisk::ops_cpu::out
