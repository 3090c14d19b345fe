// LSTM gate math; see lstm_gates.h.
#include "ops_cpu/simd/lstm_gates.h"

#include <immintrin.h>

#include <cmath>

#include "ops_cpu/simd/cpu_features.h"
#include "ops_cpu/simd/math_avx2.h"

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

namespace {

using vmath::avx2::sigmoidv;
using vmath::avx2::tanhv;

__attribute__((target("avx2,fma")))
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
      // (No lambda for the loads: it would not inherit this function's target.)
      const __m256 i = sigmoidv(_mm256_add_ps(_mm256_loadu_ps(g + j), _mm256_loadu_ps(x + j)));
      const __m256 f = sigmoidv(_mm256_add_ps(_mm256_loadu_ps(g + hd + j), _mm256_loadu_ps(x + hd + j)));
      const __m256 gg = tanhv(_mm256_add_ps(_mm256_loadu_ps(g + 2 * hd + j), _mm256_loadu_ps(x + 2 * hd + j)));
      const __m256 o = sigmoidv(_mm256_add_ps(_mm256_loadu_ps(g + 3 * hd + j), _mm256_loadu_ps(x + 3 * hd + j)));
      const __m256 cn = _mm256_add_ps(_mm256_mul_ps(f, _mm256_loadu_ps(cr + j)), _mm256_mul_ps(i, gg));
      _mm256_storeu_ps(co + j, cn);
      _mm256_storeu_ps(ho + j, _mm256_mul_ps(o, tanhv(cn)));
    }
    rowScalar(g, x, cr, ho, co, hd, j);
  }
}

}  // namespace

void lstmGates(const float* gh, const float* gx, const float* c, float* h_out, float* c_out, int64_t rows,
               int64_t hidden) {
  if (cpuHasAvx2Fma())
    lstmGatesAvx2(gh, gx, c, h_out, c_out, rows, hidden);
  else
    lstmGatesScalar(gh, gx, c, h_out, c_out, rows, hidden);
}

}  // namespace brisk::ops_cpu::out
