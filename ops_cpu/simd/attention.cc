// One head of scaled dot-product attention; see attention.h.
//
// Per head:
//   1. pack k as the GEMM's right operand, k^T [d][s] (bf16: word pairs along d);
//   2. scores [l][s] = q k^T, by a register tile of up to 6 rows x 64 columns;
//   3. per row, p = softmax(scale * scores) in fp32 (masked above the diagonal when
//      causal), written back (fp32) or rounded to bf16 for the second GEMM;
//   4. out [l][dv] = p v (v used in place when its rows are whole vectors; otherwise, and
//      always in bf16, packed first).
// The tiles' loops over rows and vectors carry `#pragma GCC unroll`: at -O2 GCC
// otherwise keeps the accumulator arrays on the stack (half the speed or less).
// Operand widths are padded to 16 lanes in scratch with zeros, so the tiles load whole
// vectors; stores of the last vector of a row are masked.
#include "ops_cpu/simd/attention.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops_cpu/simd/math_avx512.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace brisk::ops_cpu::out {
namespace {

constexpr int64_t kLanes = 16;
constexpr int kMaxRows = 6;  // tile rows: 6 x 4 accumulators + 4 operand vectors + 1 broadcast
constexpr int kMaxVecs = 4;  // tile width in vectors (64 floats)

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
size_t align64(size_t bytes) { return (bytes + 63) & ~size_t{63}; }
__mmask16 tailMask(int64_t n) { return n >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1); }

// Where each operand lives in the scratch buffer (byte offsets), and the padded sizes.
struct Layout {
  int64_t sp = 0;   // s rounded up to 16: row length of k^T and of the scores
  int64_t dvp = 0;  // dv rounded up to 16: row length of the packed v
  int64_t d2 = 0;   // bf16 pairs along d
  int64_t s2 = 0;   // bf16 pairs along s
  size_t kt = 0, krow = 0, qb = 0, scores = 0, pb = 0, vp = 0, total = 0;
};

Layout layoutOf(const AttentionDims& dims, AttentionMath math) {
  Layout a;
  a.sp = roundUp(dims.s, kLanes);
  a.dvp = roundUp(dims.dv, kLanes);
  a.d2 = (dims.d + 1) / 2;
  a.s2 = (dims.s + 1) / 2;
  size_t off = 0;
  auto take = [&](int64_t bytes) {
    const size_t at = off;
    off += align64(static_cast<size_t>(bytes));
    return at;
  };
  if (math == AttentionMath::kFp32) {
    a.kt = take(4 * dims.d * a.sp);
    a.scores = take(4 * dims.l * a.sp);
    a.vp = take(4 * dims.s * a.dvp);
  } else {
    a.kt = take(4 * a.d2 * a.sp);     // words: (k[j][2t], k[j][2t+1]) at [t][j]
    a.krow = take(4 * a.d2);          // one row of k in bf16, before it is spread over kt
    a.qb = take(2 * dims.l * 2 * a.d2);
    a.scores = take(4 * dims.l * a.sp);
    a.pb = take(2 * dims.l * 2 * a.s2);
    a.vp = take(4 * a.s2 * a.dvp);    // words: (v[2t][n], v[2t+1][n]) at [t][n]
  }
  a.total = off;
  return a;
}

// ---- tiles: MR rows x NV vectors of fp32 accumulators --------------------------------

template <int MR, int NV>
__attribute__((always_inline, target("avx512f"))) inline void zeroTile(__m512 (&acc)[MR][NV]) {
  #pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
    #pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_setzero_ps();
}

// Rows of c ldc floats apart; the last vector of each row stored under `last`.
template <int MR, int NV>
__attribute__((always_inline, target("avx512f"))) inline void storeTile(const __m512 (&acc)[MR][NV], float* c,
                                                                       int64_t ldc, __mmask16 last) {
  #pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    #pragma GCC unroll 8
    for (int j = 0; j + 1 < NV; ++j) _mm512_storeu_ps(c + i * ldc + j * kLanes, acc[i][j]);
    _mm512_mask_storeu_ps(c + i * ldc + (NV - 1) * kLanes, last, acc[i][NV - 1]);
  }
}

// ---- fp32 -------------------------------------------------------------------------

// c[MR][NV*16] = a[MR][k] b[k][NV*16]; b rows ldb floats apart, whole vectors readable.
template <int MR, int NV>
__attribute__((target("avx512f,fma"))) void tileF32(const float* a, int64_t lda, const float* b, int64_t ldb,
                                                     int64_t k, float* c, int64_t ldc, __mmask16 last) {
  __m512 acc[MR][NV];
  zeroTile<MR, NV>(acc);
  for (int64_t t = 0; t < k; ++t) {
    __m512 bv[NV];
    #pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) bv[j] = _mm512_loadu_ps(b + t * ldb + j * kLanes);
    #pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(a[i * lda + t]);
      #pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_fmadd_ps(av, bv[j], acc[i][j]);
    }
  }
  storeTile<MR, NV>(acc, c, ldc, last);
}

// ---- bf16 -------------------------------------------------------------------------

// c[MR][NV*16] = sum over t of the pair products a[i][2t..2t+1] . b[t][n] (vdpbf16ps);
// a in bf16 rows of lda elements, b in words of two bf16, rows ldb words apart.
template <int MR, int NV>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void tileBf16(const uint16_t* a, int64_t lda,
                                                                                const uint32_t* b, int64_t ldb,
                                                                                int64_t k2, float* c, int64_t ldc,
                                                                                __mmask16 last) {
  __m512 acc[MR][NV];
  zeroTile<MR, NV>(acc);
  for (int64_t t = 0; t < k2; ++t) {
    __m512bh bv[NV];
    #pragma GCC unroll 8
    for (int j = 0; j < NV; ++j) bv[j] = (__m512bh)_mm512_loadu_si512(b + t * ldb + j * kLanes);
    #pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      int32_t pair;
      std::memcpy(&pair, a + i * lda + 2 * t, 4);
      const __m512bh av = (__m512bh)_mm512_set1_epi32(pair);
      #pragma GCC unroll 8
      for (int j = 0; j < NV; ++j) acc[i][j] = _mm512_dpbf16_ps(acc[i][j], av, bv[j]);
    }
  }
  storeTile<MR, NV>(acc, c, ldc, last);
}

// ---- the GEMM driver over tiles -------------------------------------------------------

template <typename A, typename B>
using TileFn = void (*)(const A*, int64_t, const B*, int64_t, int64_t, float*, int64_t, __mmask16);

template <typename A, typename B, template <int, int> class Pick>
struct TileTable {
  TileFn<A, B> fn[kMaxRows][kMaxVecs];
  template <int MR, int NV>
  void fill() {
    fn[MR - 1][NV - 1] = Pick<MR, NV>::value;
    if constexpr (NV < kMaxVecs) fill<MR, NV + 1>();
    else if constexpr (MR < kMaxRows) fill<MR + 1, 1>();
  }
  TileTable() { fill<1, 1>(); }
};
template <int MR, int NV>
struct PickF32 {
  static constexpr TileFn<float, float> value = &tileF32<MR, NV>;
};
template <int MR, int NV>
struct PickBf16 {
  static constexpr TileFn<uint16_t, uint32_t> value = &tileBf16<MR, NV>;
};

// c[m][n] = a[m][k] b[k][n] over tiles; `k` counts a's steps (floats, or bf16 pairs);
// a's rows are `lda` elements apart.
template <typename A, typename B, template <int, int> class Pick>
void gemm(const A* a, int64_t lda, const B* b, int64_t ldb, int64_t m, int64_t n, int64_t k, float* c,
          int64_t ldc) {
  static const TileTable<A, B, Pick> table;
  for (int64_t n0 = 0; n0 < n; n0 += kLanes * kMaxVecs) {
    const int64_t width = std::min(n - n0, kLanes * kMaxVecs);
    const int nv = static_cast<int>((width + kLanes - 1) / kLanes);
    const __mmask16 last = tailMask(width - (nv - 1) * kLanes);
    for (int64_t m0 = 0; m0 < m; m0 += kMaxRows) {
      const int mr = static_cast<int>(std::min<int64_t>(kMaxRows, m - m0));
      table.fn[mr - 1][nv - 1](a + m0 * lda, lda, b + n0, ldb, k, c + m0 * ldc + n0, ldc, last);
    }
  }
}

// ---- softmax ------------------------------------------------------------------------

// row[0, n) <- exp(scale * row - max) / sum over [0, len), zero over [len, n); returns
// nothing: the row is normalized in place.
__attribute__((target("avx512f,fma"))) void softmaxRow(float* row, int64_t len, int64_t n, float scale) {
  namespace vm = vmath::avx512;
  const __m512 sc = _mm512_set1_ps(scale);
  __m512 mx = _mm512_set1_ps(-INFINITY);
  for (int64_t j = 0; j < len; j += kLanes) {
    const __mmask16 m = tailMask(len - j);
    const __m512 x = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, row + j), sc);
    mx = _mm512_mask_max_ps(mx, m, mx, x);
  }
  const __m512 top = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
  __m512 sum = _mm512_setzero_ps();
  for (int64_t j = 0; j < len; j += kLanes) {
    const __mmask16 m = tailMask(len - j);
    const __m512 e = vm::expv(_mm512_fmsub_ps(_mm512_maskz_loadu_ps(m, row + j), sc, top));
    sum = _mm512_mask_add_ps(sum, m, sum, e);
    _mm512_mask_storeu_ps(row + j, m, e);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 m = tailMask(n - j);
    const __mmask16 live = j < len ? tailMask(len - j) : __mmask16(0);
    _mm512_mask_storeu_ps(row + j, m, _mm512_maskz_mul_ps(live, _mm512_loadu_ps(row + j), inv));
  }
}

// n floats -> bf16 (nearest even), then zeros up to `padded` (an even count >= n).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void rowToBf16(const float* x, int64_t n,
                                                                                 int64_t padded, uint16_t* out) {
  for (int64_t j = 0; j < padded; j += kLanes) {
    const __mmask16 m = tailMask(padded - j);
    const __m512 v = j < n ? _mm512_maskz_loadu_ps(tailMask(n - j), x + j) : _mm512_setzero_ps();
    _mm256_mask_storeu_epi16(out + j, m, (__m256i)_mm512_cvtneps_pbh(v));
  }
}

// v pairs: out[t][n] = bf16(v[2t][n]) | bf16(v[2t+1][n]) << 16, zero past s rows / dv.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void packPairsBf16(const float* v, int64_t ldv,
                                                                                     int64_t s, int64_t dv,
                                                                                     int64_t s2, int64_t dvp,
                                                                                     uint32_t* out) {
  for (int64_t t = 0; t < s2; ++t) {
    const float* r0 = v + 2 * t * ldv;
    const float* r1 = 2 * t + 1 < s ? r0 + ldv : nullptr;
    for (int64_t n = 0; n < dvp; n += kLanes) {
      const __mmask16 m = n < dv ? tailMask(dv - n) : __mmask16(0);
      const __m512i lo = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, r0 + n)));
      const __m512i hi = r1 ? _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, r1 + n)))
                            : _mm512_setzero_si512();
      _mm512_storeu_si512(out + t * dvp + n, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
    }
  }
}

bool hasAvx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl");
  }();
  return yes;
}

void headFp32(const AttentionDims& dm, const Layout& lay, const float* q, int64_t ldq, const float* k, int64_t ldk,
              const float* v, int64_t ldv, float* out, int64_t ldo, float scale, bool causal, char* base) {
  float* kt = reinterpret_cast<float*>(base + lay.kt);
  float* scores = reinterpret_cast<float*>(base + lay.scores);
  for (int64_t j = 0; j < dm.s; ++j)
    for (int64_t c = 0; c < dm.d; ++c) kt[c * lay.sp + j] = k[j * ldk + c];
  for (int64_t c = 0; c < dm.d; ++c) std::fill(kt + c * lay.sp + dm.s, kt + (c + 1) * lay.sp, 0.0f);
  gemm<float, float, PickF32>(q, ldq, kt, lay.sp, dm.l, dm.s, dm.d, scores, lay.sp);
  for (int64_t i = 0; i < dm.l; ++i)
    softmaxRow(scores + i * lay.sp, causal ? std::min(i + 1, dm.s) : dm.s, dm.s, scale);
  // v's rows serve as they are when they are whole vectors; otherwise a padded copy.
  const float* vb = v;
  int64_t ldb = ldv;
  if (dm.dv % kLanes != 0) {
    float* vp = reinterpret_cast<float*>(base + lay.vp);
    for (int64_t j = 0; j < dm.s; ++j) {
      std::memcpy(vp + j * lay.dvp, v + j * ldv, sizeof(float) * dm.dv);
      std::fill(vp + j * lay.dvp + dm.dv, vp + (j + 1) * lay.dvp, 0.0f);
    }
    vb = vp;
    ldb = lay.dvp;
  }
  gemm<float, float, PickF32>(scores, lay.sp, vb, ldb, dm.l, dm.dv, dm.s, out, ldo);
}

void headBf16(const AttentionDims& dm, const Layout& lay, const float* q, int64_t ldq, const float* k, int64_t ldk,
              const float* v, int64_t ldv, float* out, int64_t ldo, float scale, bool causal, char* base) {
  uint32_t* kp = reinterpret_cast<uint32_t*>(base + lay.kt);
  uint16_t* qb = reinterpret_cast<uint16_t*>(base + lay.qb);
  float* scores = reinterpret_cast<float*>(base + lay.scores);
  uint16_t* pb = reinterpret_cast<uint16_t*>(base + lay.pb);
  uint32_t* vp = reinterpret_cast<uint32_t*>(base + lay.vp);
  // Each row rounded in vectors, then its words (pairs along d) spread down a column.
  uint16_t* krow = reinterpret_cast<uint16_t*>(base + lay.krow);
  for (int64_t j = 0; j < dm.s; ++j) {
    rowToBf16(k + j * ldk, dm.d, 2 * lay.d2, krow);
    for (int64_t t = 0; t < lay.d2; ++t) std::memcpy(kp + t * lay.sp + j, krow + 2 * t, 4);
  }
  for (int64_t t = 0; t < lay.d2; ++t) std::fill(kp + t * lay.sp + dm.s, kp + (t + 1) * lay.sp, 0u);
  for (int64_t i = 0; i < dm.l; ++i) rowToBf16(q + i * ldq, dm.d, 2 * lay.d2, qb + i * 2 * lay.d2);
  gemm<uint16_t, uint32_t, PickBf16>(qb, 2 * lay.d2, kp, lay.sp, dm.l, dm.s, lay.d2, scores, lay.sp);
  for (int64_t i = 0; i < dm.l; ++i) {
    float* row = scores + i * lay.sp;
    softmaxRow(row, causal ? std::min(i + 1, dm.s) : dm.s, dm.s, scale);
    rowToBf16(row, dm.s, 2 * lay.s2, pb + i * 2 * lay.s2);
  }
  packPairsBf16(v, ldv, dm.s, dm.dv, lay.s2, lay.dvp, vp);
  gemm<uint16_t, uint32_t, PickBf16>(pb, 2 * lay.s2, vp, lay.dvp, dm.l, dm.dv, lay.s2, out, ldo);
}

}  // namespace

bool attentionRuns(AttentionMath math) {
  if (!hasAvx512()) return false;
  if (math == AttentionMath::kFp32) return true;
  static const bool bf16 = __builtin_cpu_supports("avx512bf16");
  return bf16;
}

size_t attentionScratchBytes(const AttentionDims& dims, AttentionMath math) { return layoutOf(dims, math).total; }

void attentionHead(const AttentionDims& dims, const float* q, int64_t ldq, const float* k, int64_t ldk,
                   const float* v, int64_t ldv, float* out, int64_t ldo, float scale, bool causal,
                   AttentionMath math, void* scratch) {
  const Layout lay = layoutOf(dims, math);
  char* base = static_cast<char*>(scratch);
  if (math == AttentionMath::kFp32)
    headFp32(dims, lay, q, ldq, k, ldk, v, ldv, out, ldo, scale, causal, base);
  else
    headBf16(dims, lay, q, ldq, k, ldk, v, ldv, out, ldo, scale, causal, base);
}

}  // namespace brisk::ops_cpu::out

#pragma GCC diagnostic pop
