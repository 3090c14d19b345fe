#pragma once
// exp / sigmoid / tanh on eight floats (AVX2 + FMA), shared by the recurrent gate loops
// (lstm_gates.cc, gru_gates.cc). Every function carries its own target attribute, so
// this header may be included in a translation unit compiled for baseline x86-64; the
// callers reach these only after cpuHasAvx2Fma() (cpu_features.h) said yes.
//
// Cephes' single-precision polynomials, a few ulp from the correctly rounded values
// (tests/ops/lstm_gates_test.cc and gru_gates_test.cc bound the difference to std::).
#include <immintrin.h>

// The helpers are always inlined into target-specific callers, so the AVX
// argument-passing ABI note GCC emits for them does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

#define BRISK_GATE_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

namespace brisk::ops_cpu::out::avx2 {

// Cephes expf: x = n ln2 + r (|r| <= ln2 / 2, ln2 split in two for an exact product),
// exp(r) by a degree-6 polynomial, times 2^n built in the exponent bits. Inputs are
// clamped to where 2^n stays a normal float (exp(-88.4) ~ 4e-39 stands in for smaller
// results, exp(88.4) ~ 2.4e38 for larger ones: sigmoid and tanh saturate long before).
BRISK_GATE_AVX2 __m256 exp8(__m256 x) {
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

BRISK_GATE_AVX2 __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

// Cephes tanhf: an odd polynomial for |x| < 0.625 (where 1 - 2 / (e + 1) would lose
// digits to cancellation), 1 - 2 / (exp(2|x|) + 1) with x's sign above.
BRISK_GATE_AVX2 __m256 tanh8(__m256 x) {
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

}  // namespace brisk::ops_cpu::out::avx2

#pragma GCC diagnostic pop
