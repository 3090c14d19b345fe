#pragma once
// Vector math on eight floats (AVX2 + FMA): exp, sigmoid, tanh, log, erf, erfc and the
// exact GELU, shared by the fused elementwise interpreter (pointwise_program.cc) and the
// recurrent gate loops (lstm_gates.cc, gru_gates.cc, through gate_math_avx2.h). Every
// function carries its own target attribute, so this header may be included in a
// translation unit compiled for baseline x86-64; callers reach these only after
// cpuHasAvx2Fma() (cpu_features.h) said yes.
//
// Accuracy against the exact value, measured by tests/ops/fused_pointwise_test.cc over
// wide input ranges: exp8, tanh8, log8 within 1 ulp, sigmoid8 within 2, erf8 and erfc8 within
// a few ulp (erfc8 loses relative precision only where its result is subnormal). Inputs
// outside the finite range follow std::: NaN stays NaN, log of a negative is NaN, log(0) is
// -inf, exp of a large input is inf.
#include <immintrin.h>

// The helpers are always inlined into target-specific callers, so the AVX
// argument-passing ABI note GCC emits for them does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

#define BRISK_VMATH_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

namespace brisk::ops_cpu::vmath {

// Horner's rule, highest coefficient first, one FMA per coefficient (expanded at
// compile time: the coefficients become broadcast constants).
BRISK_VMATH_AVX2 __m256 horner8(__m256, __m256 acc) { return acc; }
template <class... Cs>
BRISK_VMATH_AVX2 __m256 horner8(__m256 x, __m256 acc, float c, Cs... cs) {
  return horner8(x, _mm256_fmadd_ps(acc, x, _mm256_set1_ps(c)), cs...);
}
template <class... Cs>
BRISK_VMATH_AVX2 __m256 poly8(__m256 x, float c0, Cs... cs) {
  return horner8(x, _mm256_set1_ps(c0), cs...);
}

// exp(x) = 2^n * exp(r), x = n ln2 + r, |r| <= ln2 / 2 (ln2 in two parts so n * ln2 is
// exact), exp(r) by Cephes' degree-6 polynomial. 2^n is applied as two factors 2^(n/2)
// and 2^(n - n/2), each a normal float, so results that overflow become inf and those in
// the subnormal range are still produced (rounded twice there) instead of being clamped.
BRISK_VMATH_AVX2 __m256 exp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(89.0f), lo = _mm256_set1_ps(-104.0f);
  // Constant first: min/max return the second operand when one is NaN, so NaN stays.
  x = _mm256_min_ps(hi, _mm256_max_ps(lo, x));
  const __m256 fx = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), r);
  const __m256 y = _mm256_fmadd_ps(poly8(r, 1.9875691500E-4f, 1.3981999507E-3f, 8.3334519073E-3f, 4.1665795894E-2f,
                                         1.6666665459E-1f, 5.0000001201E-1f),
                                   _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i n = _mm256_cvtps_epi32(fx);
  const __m256i n1 = _mm256_srai_epi32(n, 1);
  const __m256i n2 = _mm256_sub_epi32(n, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 p1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 p2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(y, p1), p2);
}

BRISK_VMATH_AVX2 __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

// Cephes tanhf: an odd polynomial below |x| = 0.625 (where 1 - 2 / (e^2|x| + 1) would
// cancel), 1 - 2 / (e^2|x| + 1) with x's sign above.
BRISK_VMATH_AVX2 __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 ax = _mm256_andnot_ps(sign, x);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = exp8(_mm256_add_ps(ax, ax));
  __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  big = _mm256_or_ps(big, _mm256_and_ps(sign, x));
  const __m256 s = _mm256_mul_ps(x, x);
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(poly8(s, -5.70498872745E-3f, 2.06390887954E-2f, -5.37397155531E-2f,
                                                           1.33314422036E-1f, -3.33332819422E-1f),
                                                     s),
                                       x, x);
  // NaN: ax < 0.625 is false, big is NaN (from e) -> NaN.
  return _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
}

// Cephes logf: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) = f - f^2/2 + f^3 P(f)
// with f = m - 1, plus e ln2 (ln2 in two parts). Subnormal inputs are scaled by 2^23
// first. Then the special cases: 0 -> -inf, negative -> NaN, inf -> inf, NaN -> itself.
BRISK_VMATH_AVX2 __m256 log8(__m256 x) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  const __m256 subnormal =
      _mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(1.17549435e-38f), _CMP_LT_OQ), _mm256_cmp_ps(x, zero, _CMP_GT_OQ));
  const __m256 xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(8388608.0f)), subnormal);
  const __m256i bits = _mm256_castps_si256(xs);
  // m in [0.5, 1), x = m 2^e.
  __m256 m = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f000000)));
  __m256 e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(126)));
  e = _mm256_sub_ps(e, _mm256_and_ps(subnormal, _mm256_set1_ps(23.0f)));
  // m < sqrt(1/2): use 2m (in [sqrt(1/2), 1)) and e - 1.
  const __m256 low = _mm256_cmp_ps(m, _mm256_set1_ps(0.707106781186547524f), _CMP_LT_OQ);
  e = _mm256_sub_ps(e, _mm256_and_ps(low, one));
  const __m256 f = _mm256_sub_ps(_mm256_add_ps(m, _mm256_and_ps(low, m)), one);
  const __m256 z = _mm256_mul_ps(f, f);
  __m256 y = _mm256_mul_ps(
      _mm256_mul_ps(poly8(f, 7.0376836292E-2f, -1.1514610310E-1f, 1.1676998740E-1f, -1.2420140846E-1f, 1.4249322787E-1f,
                          -1.6668057665E-1f, 2.0000714765E-1f, -2.4999993993E-1f, 3.3333331174E-1f),
                    f),
      z);
  y = _mm256_fmadd_ps(e, _mm256_set1_ps(-2.12194440e-4f), y);
  y = _mm256_fnmadd_ps(z, _mm256_set1_ps(0.5f), y);
  __m256 r = _mm256_add_ps(f, y);
  r = _mm256_fmadd_ps(e, _mm256_set1_ps(0.693359375f), r);
  const __m256 inf = _mm256_set1_ps(__builtin_inff());
  r = _mm256_blendv_ps(r, _mm256_sub_ps(zero, inf), _mm256_cmp_ps(x, zero, _CMP_EQ_OQ));
  r = _mm256_blendv_ps(r, _mm256_set1_ps(__builtin_nanf("")), _mm256_cmp_ps(x, zero, _CMP_LT_OQ));
  r = _mm256_blendv_ps(r, inf, _mm256_cmp_ps(x, inf, _CMP_EQ_OQ));
  return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// erfc(a) for a >= 0 (and NaN): exp(-a^2) t Q(t), t = 1 / (1 + a/2), Q a degree-10
// least-squares fit of erfc(a) exp(a^2) / t over [0, 10] (relative error 5e-9, 1.5e-7
// with float arithmetic; the form of Numerical Recipes' erfcc, W. H. Press et al.,
// section 6.2). a^2 is split into hi + lo exactly (FMA) and exp(-lo) taken as 1 - lo, so
// the rounding of a^2 -- up to 100 here -- does not become a relative error of
// exp(-a^2). From 10 on, erfc is within a rounding of 0: the result is 0 (a is clamped
// first: inf would make lo NaN).
BRISK_VMATH_AVX2 __m256 erfc8(__m256 a) {
  const __m256 one = _mm256_set1_ps(1.0f), ten = _mm256_set1_ps(10.0f);
  const __m256 beyond = _mm256_cmp_ps(a, ten, _CMP_GE_OQ);
  a = _mm256_min_ps(ten, a);  // constant first: NaN stays
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(a, _mm256_set1_ps(0.5f), one));
  const __m256 hi = _mm256_mul_ps(a, a);
  const __m256 lo = _mm256_fmsub_ps(a, a, hi);
  const __m256 e = _mm256_mul_ps(
      exp8(_mm256_sub_ps(_mm256_setzero_ps(), hi)),
      _mm256_mul_ps(t, poly8(t, 0.038274612205384154f, -0.20534648819705092f, 0.41708317403896455f,
                             -0.34053370361862734f, 0.024100434601750757f, 0.00794287878618958f, 0.06577960474381192f,
                             0.18275829295487372f, 0.24564102828438744f, 0.2822099834394097f, 0.2820901875713471f)));
  return _mm256_andnot_ps(beyond, _mm256_fnmadd_ps(e, lo, e));
}

// erf(x) = x P(x^2) below |x| = 0.875 (P a degree-6 least-squares fit of erf(x) / x,
// relative error 2e-10), sign(x) (1 - erfc(|x|)) above.
constexpr float kErfSmallLimit = 0.875f;
BRISK_VMATH_AVX2 __m256 erfSmall8(__m256 x) {
  return _mm256_mul_ps(x,
                       poly8(_mm256_mul_ps(x, x), 8.713411808258797e-05f, -0.000822036022675901f, 0.005207606740391266f,
                             -0.026861962091353747f, 0.1128374084089605f, -0.37612636721193843f, 1.1283791669964442f));
}

BRISK_VMATH_AVX2 __m256 erf8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  const __m256 big = _mm256_or_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), erfc8(a)), _mm256_and_ps(sign, x));
  return _mm256_blendv_ps(big, erfSmall8(x), _mm256_cmp_ps(a, _mm256_set1_ps(kErfSmallLimit), _CMP_LT_OQ));
}

// GELU without approximation, x/2 (1 + erf(x / sqrt(2))) in ATen's order of operations,
// with 1 + erf(u) taken from erfc(|u|) alone: 2 - erfc(u) above 0, erfc(-u) below. No
// cancellation on the negative side (where ATen's 1 + erf keeps only the bits of erfc
// above 2^-24), and one polynomial for all inputs.
BRISK_VMATH_AVX2 __m256 geluErf8(__m256 x) {
  const __m256 u = _mm256_mul_ps(x, _mm256_set1_ps(0.707106781186547524f));
  const __m256 ec = erfc8(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), u));
  // u > 0: 2 - erfc; u <= 0 (and NaN): erfc.
  const __m256 w =
      _mm256_blendv_ps(ec, _mm256_sub_ps(_mm256_set1_ps(2.0f), ec), _mm256_cmp_ps(u, _mm256_setzero_ps(), _CMP_GT_OQ));
  return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.5f)), w);
}

}  // namespace brisk::ops_cpu::vmath

#pragma GCC diagnostic pop
