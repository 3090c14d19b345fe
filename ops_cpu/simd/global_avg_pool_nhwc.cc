// Global average pooling over NHWC; see global_avg_pool_nhwc.h.
#include "ops_cpu/simd/global_avg_pool_nhwc.h"

#include <immintrin.h>

#include "ops_cpu/simd/cpu_features.h"

namespace brisk::ops_cpu::out {
namespace {

// Channels [c0, c0 + 32) at a time in four registers, across all rows: each output
// value is written once.
__attribute__((target("avx2"))) void imageAvx2(const float* in, float* out, int64_t hw, int64_t channels,
                                               float scale) {
  int64_t c = 0;
  for (; c + 32 <= channels; c += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t p = 0; p < hw; ++p) {
      const float* row = in + p * channels + c;
      a0 = _mm256_add_ps(a0, _mm256_loadu_ps(row));
      a1 = _mm256_add_ps(a1, _mm256_loadu_ps(row + 8));
      a2 = _mm256_add_ps(a2, _mm256_loadu_ps(row + 16));
      a3 = _mm256_add_ps(a3, _mm256_loadu_ps(row + 24));
    }
    const __m256 s = _mm256_set1_ps(scale);
    _mm256_storeu_ps(out + c, _mm256_mul_ps(a0, s));
    _mm256_storeu_ps(out + c + 8, _mm256_mul_ps(a1, s));
    _mm256_storeu_ps(out + c + 16, _mm256_mul_ps(a2, s));
    _mm256_storeu_ps(out + c + 24, _mm256_mul_ps(a3, s));
  }
  for (; c + 8 <= channels; c += 8) {
    __m256 a = _mm256_setzero_ps();
    for (int64_t p = 0; p < hw; ++p) a = _mm256_add_ps(a, _mm256_loadu_ps(in + p * channels + c));
    _mm256_storeu_ps(out + c, _mm256_mul_ps(a, _mm256_set1_ps(scale)));
  }
  for (; c < channels; ++c) {
    float a = 0.0f;
    for (int64_t p = 0; p < hw; ++p) a += in[p * channels + c];
    out[c] = a * scale;
  }
}

void imageScalar(const float* in, float* out, int64_t hw, int64_t channels, float scale) {
  for (int64_t c = 0; c < channels; ++c) {
    float a = 0.0f;
    for (int64_t p = 0; p < hw; ++p) a += in[p * channels + c];
    out[c] = a * scale;
  }
}

}  // namespace

void globalAvgPoolNhwc(const float* in, float* out, int64_t batch, int64_t hw, int64_t channels) {
  // ATen divides the sum by the count; multiplying by its float reciprocal can differ in
  // the last bit, within the rounding the summation order already leaves.
  const float scale = 1.0f / static_cast<float>(hw);
  for (int64_t n = 0; n < batch; ++n) {
    const float* image = in + n * hw * channels;
    if (cpuHasAvx2Fma())
      imageAvx2(image, out + n * channels, hw, channels, scale);
    else
      imageScalar(image, out + n * channels, hw, channels, scale);
  }
}

}  // namespace brisk::ops_cpu::out
