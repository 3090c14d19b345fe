// LSTM gate math; see lstm_gates.h.
#include "ops_cpu/simd/lstm_gates.h"

#include <immintrin.h>

#include <cmath>

#include "ops_cpu/simd/cpu_features.h"

// The vector helpers below are always inlined into target-specific callers, so the
// AVX argument-passing ABI note GCC emits for them does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace brisk::ops_cpu::out {
namespace {

inline float sigmoidScalar(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Elements [j0, hidden) of one row with std:: functions.
inline void rowScalar(const float* g, const float* x, const float* c, float* ho, float* co, int64_t hd, int64_t j0) {
  for (int64_t j = j0; j < hd; ++j) {
    const float i = sigmoidScalar(g[j] + x[j]);
    const float f = sigmoidScalar(g[hd + j] + x[hd + j]);
    const float gg = std::tanh(g[2 * hd + j] + x[2 * hd + j]);
    const float o = sigmoidScalar(g[3 * hd + j] + x[3 * hd + j]);
    const float fc = f * c[j];
    const float ig = i * gg;
    const float cn = fc + ig;
    co[j] = cn;
    ho[j] = o * std::tanh(cn);
  }
}

}  // namespace

void lstmGatesScalar(const float* gh, const float* gx, const float* c, float* h_out, float* c_out, int64_t rows,
                     int64_t hidden) {
  for (int64_t r = 0; r < rows; ++r)
    rowScalar(gh + r * 4 * hidden, gx + r * 4 * hidden, c + r * hidden, h_out + r * hidden, c_out + r * hidden,
              hidden, 0);
}

#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace {

// Cephes expf: x = n ln2 + r (|r| <= ln2 / 2, ln2 split in two for an exact product),
// exp(r) by a degree-6 polynomial, times 2^n built in the exponent bits. Inputs are
// clamped to where 2^n stays a normal float (exp(-88.4) ~ 4e-39 stands in for smaller
// results, exp(88.4) ~ 2.4e38 for larger ones: sigmoid and tanh saturate long before).
inline __m256 exp8(__m256 x) {
  // Constants first: max/min return their second operand when either is NaN, so NaN
  // goes through (and comes out NaN, as from std::exp).
  x = _mm256_min_ps(_mm256_set1_ps(88.3762626647949f), _mm256_max_ps(_mm256_set1_ps(-88.3762626647949f), x));
  __m256 fx = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f));
  fx = _mm256_floor_ps(fx);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500E-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894E-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459E-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201E-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  const __m256i n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(fx), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(n));
}

inline __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

// Cephes tanhf: an odd polynomial for |x| < 0.625 (where 1 - 2 / (e + 1) would lose
// digits to cancellation), 1 - 2 / (exp(2|x|) + 1) with x's sign above.
inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 ax = _mm256_andnot_ps(sign, x);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = exp8(_mm256_add_ps(ax, ax));
  __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  big = _mm256_or_ps(big, _mm256_and_ps(sign, x));
  const __m256 s = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.70498872745E-3f);
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(2.06390887954E-2f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-5.37397155531E-2f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(1.33314422036E-1f));
  p = _mm256_fmadd_ps(p, s, _mm256_set1_ps(-3.33332819422E-1f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, s), x, x);
  return _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
}

void lstmGatesAvx2(const float* gh, const float* gx, const float* c, float* h_out, float* c_out, int64_t rows,
                   int64_t hd) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = gh + r * 4 * hd;
    const float* x = gx + r * 4 * hd;
    const float* cr = c + r * hd;
    float* ho = h_out + r * hd;
    float* co = c_out + r * hd;
    int64_t j = 0;
    for (; j + 8 <= hd; j += 8) {
      auto gate = [&](int64_t k) { return _mm256_add_ps(_mm256_loadu_ps(g + k * hd + j), _mm256_loadu_ps(x + k * hd + j)); };
      const __m256 i = sigmoid8(gate(0));
      const __m256 f = sigmoid8(gate(1));
      const __m256 gg = tanh8(gate(2));
      const __m256 o = sigmoid8(gate(3));
      const __m256 cn = _mm256_add_ps(_mm256_mul_ps(f, _mm256_loadu_ps(cr + j)), _mm256_mul_ps(i, gg));
      _mm256_storeu_ps(co + j, cn);
      _mm256_storeu_ps(ho + j, _mm256_mul_ps(o, tanh8(cn)));
    }
    rowScalar(g, x, cr, ho, co, hd, j);
  }
}

}  // namespace

#pragma GCC pop_options

void lstmGates(const float* gh, const float* gx, const float* c, float* h_out, float* c_out, int64_t rows,
               int64_t hidden) {
  if (cpuHasAvx2Fma())
    lstmGatesAvx2(gh, gx, c, h_out, c_out, rows, hidden);
  else
    lstmGatesScalar(gh, gx, c, h_out, c_out, rows, hidden);
}

}  // namespace brisk::ops_cpu::out
