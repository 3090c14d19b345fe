// ops_cpu/simd/attention.h against a double-precision reference: shapes with and
// without vector tails, strided rows, causal masking, large logits (the softmax's max
// subtraction), and nothing written outside the output's rows.
#include "ops_cpu/simd/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace brisk::ops_cpu::out {
namespace {

float bf16Round(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  u &= 0xffff0000u;
  std::memcpy(&f, &u, 4);
  return f;
}

struct Case {
  AttentionDims dims;
  bool causal = false;
  float spread = 1.0f;  // input magnitude: large values give logits in the hundreds
};

// Reference in double; in bf16 the operands (q, k, the probabilities, v) are rounded as
// the kernel rounds them, so what remains is summation order.
std::vector<double> reference(const Case& c, const std::vector<float>& q, int64_t ldq, const std::vector<float>& k,
                              int64_t ldk, const std::vector<float>& v, int64_t ldv, float scale, bool bf16) {
  const AttentionDims& d = c.dims;
  auto r = [&](float x) { return bf16 ? static_cast<double>(bf16Round(x)) : static_cast<double>(x); };
  std::vector<double> out(d.l * d.dv, 0.0);
  for (int64_t i = 0; i < d.l; ++i) {
    const int64_t len = c.causal ? std::min(i + 1, d.s) : d.s;
    std::vector<double> p(len);
    double mx = -INFINITY;
    for (int64_t j = 0; j < len; ++j) {
      double acc = 0;
      for (int64_t t = 0; t < d.d; ++t) acc += r(q[i * ldq + t]) * r(k[j * ldk + t]);
      // The kernel rounds the fp32 score; its error is far below the tolerance.
      p[j] = static_cast<double>(static_cast<float>(acc)) * scale;
      mx = std::max(mx, p[j]);
    }
    double sum = 0;
    for (double& x : p) sum += (x = std::exp(x - mx));
    for (int64_t j = 0; j < len; ++j) {
      const double pj = bf16 ? r(static_cast<float>(p[j] / sum)) : p[j] / sum;
      for (int64_t n = 0; n < d.dv; ++n) out[i * d.dv + n] += pj * r(v[j * ldv + n]);
    }
  }
  return out;
}

void check(const Case& c, AttentionMath math) {
  if (!attentionRuns(math)) GTEST_SKIP() << "this CPU does not run the kernel";
  const AttentionDims& d = c.dims;
  std::mt19937 gen(static_cast<uint32_t>(d.l * 131 + d.s * 17 + d.d * 7 + d.dv + c.causal));
  std::normal_distribution<float> nd(0.0f, c.spread);
  // Rows padded by 3 floats: the kernel must honour the leading dimensions.
  const int64_t ldq = d.d + 3, ldk = d.d + 5, ldv = d.dv + 1, ldo = d.dv + 7;
  std::vector<float> q(d.l * ldq), k(d.s * ldk), v(d.s * ldv);
  for (auto& x : q) x = nd(gen);
  for (auto& x : k) x = nd(gen);
  for (auto& x : v) x = nd(gen);
  const std::vector<float> q0 = q, k0 = k, v0 = v;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d.d));
  constexpr float kCanary = 12345.0f;
  std::vector<float> out(d.l * ldo, kCanary);
  std::vector<uint8_t> scratch(attentionScratchBytes(d, math) + 64);
  void* aligned = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
  attentionHead(d, q.data(), ldq, k.data(), ldk, v.data(), ldv, out.data(), ldo, scale, c.causal, math, aligned);
  EXPECT_EQ(q, q0);
  EXPECT_EQ(k, k0);
  EXPECT_EQ(v, v0);
  const bool bf16 = math == AttentionMath::kBf16;
  const std::vector<double> ref = reference(c, q, ldq, k, ldk, v, ldv, scale, bf16);
  // Outputs are convex combinations of v's rows: bounded by max |v|, which sets the
  // scale of the error. fp32: summation order and exp's few ulps; bf16: the same plus
  // the fp32 scores' rounding feeding exp, which bf16's rounded probabilities amplify.
  double vmax = 0;
  for (float x : v) vmax = std::max(vmax, static_cast<double>(std::fabs(x)));
  const double tol = (bf16 ? 2e-3 : 2e-5) * vmax * (c.spread > 1 ? 50 : 1);
  for (int64_t i = 0; i < d.l; ++i) {
    for (int64_t n = 0; n < d.dv; ++n)
      ASSERT_NEAR(out[i * ldo + n], ref[i * d.dv + n], tol) << "row " << i << " col " << n;
    for (int64_t n = d.dv; n < ldo; ++n) ASSERT_EQ(out[i * ldo + n], kCanary) << "row " << i << " wrote past dv";
  }
  // A second call on the same scratch gives the same bits.
  std::vector<float> again(d.l * ldo, kCanary);
  attentionHead(d, q.data(), ldq, k.data(), ldk, v.data(), ldv, again.data(), ldo, scale, c.causal, math, aligned);
  EXPECT_EQ(out, again);
}

const Case kCases[] = {
    {{64, 64, 64, 64}},         // the zoo transformer's heads
    {{64, 64, 64, 64}, true},   // causal
    {{1, 1, 1, 1}},             // smallest
    {{7, 13, 5, 3}},            // every width a tail, odd pairs
    {{13, 7, 17, 33}, true},    // more queries than keys, causal
    {{50, 197, 32, 32}},        // ViT-like
    {{128, 128, 64, 80}},       // dv not a multiple of 16 (v packed)
    {{16, 16, 64, 64}, false, 8.0f},  // logits in the hundreds
};

TEST(AttentionKernel, Fp32MatchesReference) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(testing::Message() << c.dims.l << "x" << c.dims.s << " d" << c.dims.d << " dv" << c.dims.dv
                                    << (c.causal ? " causal" : ""));
    check(c, AttentionMath::kFp32);
  }
}

TEST(AttentionKernel, Bf16MatchesRoundedReference) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(testing::Message() << c.dims.l << "x" << c.dims.s << " d" << c.dims.d << " dv" << c.dims.dv
                                    << (c.causal ? " causal" : ""));
    check(c, AttentionMath::kBf16);
  }
}

}  // namespace
}  // namespace brisk::ops_cpu::out
