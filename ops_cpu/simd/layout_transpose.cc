// Float plane transposes; see layout_transpose.h.
#include "ops_cpu/simd/layout_transpose.h"

#include <immintrin.h>

#include <algorithm>

#include "ops_cpu/simd/cpu_features.h"

namespace brisk::ops_cpu::out {
namespace {

// Tiles of kTile x kTile floats (16 KB) keep both sides of a tile in L1.
constexpr int64_t kTile = 64;

// dst[c * ld + r] = src[r * ls + c] over rows [r0, r1) and columns [c0, c1).
void tileScalar(const float* src, int64_t ls, float* dst, int64_t ld, int64_t r0, int64_t r1, int64_t c0,
                int64_t c1) {
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t c = c0; c < c1; ++c) dst[c * ld + r] = src[r * ls + c];
}

// An 8x8 block: rows of `s` (stride ls) become columns of `d` (stride ld). The loops
// are unrolled so that the arrays stay in registers: at -O2 GCC kept them on the stack,
// which made the transposes take twice as long.
__attribute__((target("avx2"), always_inline)) inline void block8(const float* s, int64_t ls, float* d, int64_t ld) {
  __m256 r[8], t[8], u[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + i * ls);
#pragma GCC unroll 8
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 2; ++i) {
    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(d + i * ld, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
    _mm256_storeu_ps(d + (i + 4) * ld, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
  }
}

// A 16x16 block: rows of `s` (stride ls, 16 floats each readable) become the first
// `n` columns of `d` (stride ld), one 64-byte store per column. On nChw16c -> NCHW
// (48 channels at 28x28, Zen 4, one thread) 2.7 us against 4.4 in 8x8 AVX2 blocks and
// 3.5 in oneDNN's reorder, which takes 10.7 us for 24 channels (1.6 here).
__attribute__((target("avx512f"), always_inline)) inline void block16(const float* s, int64_t ls, float* d,
                                                                      int64_t ld, int n) {
  __m512 r[16], t[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(s + i * ls);
  // Pairs of rows interleaved, then pairs of pairs: 128-bit lane j of r[4a + k] then
  // holds column 4j + k of rows 4a .. 4a + 3.
#pragma GCC unroll 16
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 16
  for (int a = 0; a < 4; ++a) {
    r[4 * a + 0] = _mm512_shuffle_ps(t[4 * a + 0], t[4 * a + 2], 0x44);
    r[4 * a + 1] = _mm512_shuffle_ps(t[4 * a + 0], t[4 * a + 2], 0xEE);
    r[4 * a + 2] = _mm512_shuffle_ps(t[4 * a + 1], t[4 * a + 3], 0x44);
    r[4 * a + 3] = _mm512_shuffle_ps(t[4 * a + 1], t[4 * a + 3], 0xEE);
  }
  // Then the 128-bit lanes: column 4j + k gathers lane j of r[k], r[4 + k], r[8 + k],
  // r[12 + k].
#pragma GCC unroll 16
  for (int k = 0; k < 4; ++k) {
    const __m512 lo01 = _mm512_shuffle_f32x4(r[k], r[4 + k], 0x44);   // lanes 0,1 of r[k], r[4+k]
    const __m512 hi01 = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0x44);
    const __m512 lo23 = _mm512_shuffle_f32x4(r[k], r[4 + k], 0xEE);   // lanes 2,3
    const __m512 hi23 = _mm512_shuffle_f32x4(r[8 + k], r[12 + k], 0xEE);
    t[k] = _mm512_shuffle_f32x4(lo01, hi01, 0x88);       // lane 0 of each: column k
    t[4 + k] = _mm512_shuffle_f32x4(lo01, hi01, 0xDD);   // lane 1: column 4 + k
    t[8 + k] = _mm512_shuffle_f32x4(lo23, hi23, 0x88);   // lane 2: column 8 + k
    t[12 + k] = _mm512_shuffle_f32x4(lo23, hi23, 0xDD);  // lane 3: column 12 + k
  }
#pragma GCC unroll 16
  for (int c = 0; c < n; ++c) _mm512_storeu_ps(d + c * ld, t[c]);
}

// Block `src` [rows, 16] (16 floats per row readable, the first `cols` kept) to `dst`
// [cols, ld]: the 16-row blocks in AVX-512, the rest a plain loop.
__attribute__((target("avx512f"))) void unblock16(const float* src, float* dst, int64_t ld, int64_t rows, int cols) {
  int64_t r = 0;
  for (; r + 16 <= rows; r += 16) block16(src + r * 16, 16, dst + r, ld, cols);
  tileScalar(src, 16, dst, ld, r, rows, 0, cols);
}

// dst[c * ld + r] = src[r * ls + c] for r < rows, c < cols.
__attribute__((target("avx2"))) void planeAvx2(const float* src, int64_t ls, float* dst, int64_t ld, int64_t rows,
                                               int64_t cols) {
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      int64_t r = r0;
      for (; r + 8 <= r1; r += 8) {
        int64_t c = c0;
        for (; c + 8 <= c1; c += 8) block8(src + r * ls + c, ls, dst + c * ld + r, ld);
        tileScalar(src, ls, dst, ld, r, r + 8, c, c1);
      }
      tileScalar(src, ls, dst, ld, r, r1, c0, c1);
    }
}

void planeScalar(const float* src, int64_t ls, float* dst, int64_t ld, int64_t rows, int64_t cols) {
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile)
      tileScalar(src, ls, dst, ld, r0, std::min(rows, r0 + kTile), c0, std::min(cols, c0 + kTile));
}

void plane(const float* src, int64_t ls, float* dst, int64_t ld, int64_t rows, int64_t cols) {
  if (cpuHasAvx2Fma())
    planeAvx2(src, ls, dst, ld, rows, cols);
  else
    planeScalar(src, ls, dst, ld, rows, cols);
}

}  // namespace

void transposePlanes(const float* src, float* dst, int64_t batch, int64_t rows, int64_t cols) {
  const int64_t size = rows * cols;
  for (int64_t b = 0; b < batch; ++b) plane(src + b * size, cols, dst + b * size, rows, rows, cols);
}

void unblockPlanes(const float* src, float* dst, int64_t batch, int64_t channels, int64_t hw, int64_t block) {
  const int64_t blocks = (channels + block - 1) / block;
  const bool avx512 = block == 16 && cpuHasAvx512();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t k = 0; k < blocks; ++k) {
      const float* s = src + (b * blocks + k) * hw * block;
      float* d = dst + (b * channels + k * block) * hw;
      const int64_t cols = std::min(block, channels - k * block);
      if (avx512)
        unblock16(s, d, hw, hw, static_cast<int>(cols));
      else
        plane(s, block, d, hw, hw, cols);
    }
}

}  // namespace brisk::ops_cpu::out
