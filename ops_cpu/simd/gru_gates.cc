// GRU gate math; see gru_gates.h.
#include "ops_cpu/simd/gru_gates.h"

#include <immintrin.h>

#include <cmath>

#include "ops_cpu/simd/cpu_features.h"
#include "ops_cpu/simd/math_avx2.h"

#pragma GCC diagnostic ignored "-Wpsabi"

namespace brisk::ops_cpu::out {
namespace {

inline float sigmoidScalar(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Elements [j0, hidden) of one row with std:: functions.
inline void rowScalar(const float* g, const float* x, const float* h, float* ho, int64_t hd, int64_t j0) {
  for (int64_t j = j0; j < hd; ++j) {
    const float r = sigmoidScalar(g[j] + x[j]);
    const float z = sigmoidScalar(g[hd + j] + x[hd + j]);
    const float rn = g[2 * hd + j] * r;
    const float n = std::tanh(x[2 * hd + j] + rn);
    const float d = h[j] - n;
    const float dz = d * z;
    ho[j] = dz + n;
  }
}

__attribute__((target("avx2,fma"))) void gruGatesAvx2(const float* gh, const float* gx, const float* h, float* h_out,
                                                      int64_t rows, int64_t hd) {
  using vmath::avx2::sigmoidv;
  using vmath::avx2::tanhv;
  for (int64_t row = 0; row < rows; ++row) {
    const float* g = gh + row * 3 * hd;
    const float* x = gx + row * 3 * hd;
    const float* hr = h + row * hd;
    float* ho = h_out + row * hd;
    int64_t j = 0;
    for (; j + 8 <= hd; j += 8) {
      const __m256 r = sigmoidv(_mm256_add_ps(_mm256_loadu_ps(g + j), _mm256_loadu_ps(x + j)));
      const __m256 z = sigmoidv(_mm256_add_ps(_mm256_loadu_ps(g + hd + j), _mm256_loadu_ps(x + hd + j)));
      // Separate mul and add (no fma): ATen rounds the product r * gh_n first.
      const __m256 rn = _mm256_mul_ps(_mm256_loadu_ps(g + 2 * hd + j), r);
      const __m256 n = tanhv(_mm256_add_ps(_mm256_loadu_ps(x + 2 * hd + j), rn));
      const __m256 dz = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(hr + j), n), z);
      _mm256_storeu_ps(ho + j, _mm256_add_ps(dz, n));
    }
    rowScalar(g, x, hr, ho, hd, j);
  }
}

}  // namespace

void gruGatesScalar(const float* gh, const float* gx, const float* h, float* h_out, int64_t rows, int64_t hidden) {
  for (int64_t r = 0; r < rows; ++r)
    rowScalar(gh + r * 3 * hidden, gx + r * 3 * hidden, h + r * hidden, h_out + r * hidden, hidden, 0);
}

void gruGates(const float* gh, const float* gx, const float* h, float* h_out, int64_t rows, int64_t hidden) {
  if (cpuHasAvx2Fma())
    gruGatesAvx2(gh, gx, h, h_out, rows, hidden);
  else
    gruGatesScalar(gh, gx, h, h_out, rows, hidden);
}

}  // namespace brisk::ops_cpu::out
