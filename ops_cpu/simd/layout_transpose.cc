// Float plane transposes; see layout_transpose.h.
#include "ops_cpu/simd/layout_transpose.h"

#include <immintrin.h>

#include <algorithm>

#include "ops_cpu/simd/cpu_features.h"

namespace brisk::ops_cpu::out {
namespace {

// Tiles of kTile x kTile floats (16 KB) keep both sides of a tile in L1.
constexpr int64_t kTile = 64;

void tileScalar(const float* src, float* dst, int64_t rows, int64_t cols, int64_t r0, int64_t r1, int64_t c0,
                int64_t c1) {
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t c = c0; c < c1; ++c) dst[c * rows + r] = src[r * cols + c];
}

// An 8x8 block: rows of `s` (stride ls) become columns of `d` (stride ld).
__attribute__((target("avx2"), always_inline)) inline void block8(const float* s, int64_t ls, float* d, int64_t ld) {
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + i * ls);
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(d + i * ld, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
    _mm256_storeu_ps(d + (i + 4) * ld, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
  }
}

__attribute__((target("avx2"))) void planeAvx2(const float* src, float* dst, int64_t rows, int64_t cols) {
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      int64_t r = r0;
      for (; r + 8 <= r1; r += 8) {
        int64_t c = c0;
        for (; c + 8 <= c1; c += 8) block8(src + r * cols + c, cols, dst + c * rows + r, rows);
        tileScalar(src, dst, rows, cols, r, r + 8, c, c1);
      }
      tileScalar(src, dst, rows, cols, r, r1, c0, c1);
    }
}

}  // namespace

void transposePlanes(const float* src, float* dst, int64_t batch, int64_t rows, int64_t cols) {
  const int64_t plane = rows * cols;
  for (int64_t b = 0; b < batch; ++b) {
    if (cpuHasAvx2Fma())
      planeAvx2(src + b * plane, dst + b * plane, rows, cols);
    else
      for (int64_t r0 = 0; r0 < rows; r0 += kTile)
        for (int64_t c0 = 0; c0 < cols; c0 += kTile)
          tileScalar(src + b * plane, dst + b * plane, rows, cols, r0, std::min(rows, r0 + kTile), c0,
                     std::min(cols, c0 + kTile));
  }
}

}  // namespace brisk::ops_cpu::out
