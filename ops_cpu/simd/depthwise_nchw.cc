// Direct NCHW depthwise convolution; see depthwise_nchw.h for why and for the order of
// operations that makes it match oneDNN bit for bit.
#include "ops_cpu/simd/depthwise_nchw.h"

#include <immintrin.h>

#include <algorithm>

#include "ops_cpu/simd/cpu_features.h"

// The vector helpers below are always inlined into target-specific callers, so the
// AVX argument-passing ABI note GCC emits for them does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace brisk::ops_cpu::out {

bool depthwiseDirectAvailable() { return cpuHasAvx2Fma(); }

// Everything below is compiled for AVX2 + FMA (lambdas included, which a per-function
// target attribute would not cover); callers check depthwiseDirectAvailable() first.
#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace {

#define BRISK_DW_INLINE inline __attribute__((always_inline))

constexpr int kLanes = 8;

// The kernel rows [lo, hi) of one output row that fall inside the input (rows in the
// padding are skipped, as oneDNN skips them). Monotone in the kernel row, so a range.
struct RowRange {
  int64_t first_input_row;  // input row of kernel row 0 (may be negative)
  int64_t lo, hi;
};

inline RowRange rowRange(int64_t oy, const ConvDim& h) {
  RowRange r{oy * h.stride - h.pad, 0, h.kernel};
  while (r.lo < r.hi && r.first_input_row + r.lo * h.dilation < 0) ++r.lo;
  while (r.hi > r.lo && r.first_input_row + (r.hi - 1) * h.dilation >= h.in) --r.hi;
  return r;
}

// One output element: bias, then one FMA per tap inside the input, rows outer.
BRISK_DW_INLINE float outputAt(const float* x, const float* k, float bias, const RowRange& rows, const ConvDim& h,
                               const ConvDim& w, int64_t ox) {
  float acc = bias;
  const int64_t ix0 = ox * w.stride - w.pad;
  for (int64_t ky = rows.lo; ky < rows.hi; ++ky) {
    const float* row = x + (rows.first_input_row + ky * h.dilation) * w.in;
    const float* kr = k + ky * w.kernel;
    for (int64_t kx = 0; kx < w.kernel; ++kx) {
      const int64_t ix = ix0 + kx * w.dilation;
      if (ix >= 0 && ix < w.in) acc = __builtin_fmaf(row[ix], kr[kx], acc);
    }
  }
  return acc;
}

// p[0], p[2], ..., p[14] from two loads that never read past p[14] (the last element
// an interior window touches): a = p[0..8), b = p[7..15). shufps takes a's elements 0
// and 2 and b's elements 1 and 3 of each 128-bit lane, which gives the 64-bit pairs in
// the order (p0 p2) (p8 p10) (p4 p6) (p12 p14): "permuted". FMAs are lane-wise and the
// weights and bias are the same in every lane, so accumulation runs on permuted vectors
// and unpermute() restores the order once per output vector.
BRISK_DW_INLINE __m256 evensPermuted(const float* p) {
  const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 7);
  return _mm256_shuffle_ps(a, b, 0xD8);
}
BRISK_DW_INLINE __m256 unpermute(__m256 v) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xD8));
}

// U vectors of interior outputs (every tap inside the row) starting at column ox, for
// stride S (1 or 2); KW > 0 fixes the kernel width at compile time (3 for MobileNet),
// 0 reads it from `w`.
template <int U, int S, int KW>
BRISK_DW_INLINE void interior(const float* x, const float* k, float bias, const RowRange& rows, const ConvDim& h,
                              const ConvDim& w, float* yrow, int64_t ox) {
  const int64_t kw = KW > 0 ? KW : w.kernel;
  __m256 acc[U];
  const __m256 bv = _mm256_set1_ps(bias);
  // The unroll pragmas keep acc[] in registers (GCC -O2 would otherwise leave the
  // array on the stack and store and reload it around every FMA).
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) acc[u] = bv;
  const int64_t ix0 = ox * S - w.pad;
  for (int64_t ky = rows.lo; ky < rows.hi; ++ky) {
    const float* row = x + (rows.first_input_row + ky * h.dilation) * w.in + ix0;
    const float* kr = k + ky * kw;
#pragma GCC unroll 8
    for (int64_t kx = 0; kx < kw; ++kx) {
      const __m256 wv = _mm256_set1_ps(kr[kx]);
      const float* p = row + kx * w.dilation;
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) {
        const __m256 v = S == 1 ? _mm256_loadu_ps(p + kLanes * u) : evensPermuted(p + 2 * kLanes * u);
        acc[u] = _mm256_fmadd_ps(v, wv, acc[u]);
      }
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < U; ++u) _mm256_storeu_ps(yrow + ox + kLanes * u, S == 1 ? acc[u] : unpermute(acc[u]));
}

// Lanes l with lo <= l < hi, as an all-ones int32 mask.
BRISK_DW_INLINE __m256i laneMask(int64_t lo, int64_t hi) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i above = _mm256_cmpgt_epi32(iota, _mm256_set1_epi32(static_cast<int>(std::max<int64_t>(lo, -1)) - 1));
  const __m256i below = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<int64_t>(hi, 8))), iota);
  return _mm256_and_si256(above, below);
}

// Border blocks: a vector of outputs [ox, ox + n) (n <= 8) where some taps fall outside
// the row (the borders, narrow planes). A tap is applied to the lanes whose input column
// is inside the row and kept out of the others by a blend, so every lane performs
// exactly the scalar sequence (a skipped tap leaves the lane untouched; multiplying a
// zero instead would turn -0 into +0 and an infinite weight into NaN). Loads are masked
// to the valid columns, so they never touch memory outside the row. The masks depend
// only on the column, so they are computed once per call (RowLayout), not per row.
constexpr int kMaxKernelWidth = 8;  // wider kernels run the scalar path
constexpr int kMaxBorderBlocks = 6;

struct TapLanes {
  enum Mode : int { kNone, kAll, kSome } mode = kNone;
  __m256i load_a, load_b;  // kSome: elements to load from p[0..8) and p[7..15)
  __m256i blend;           // kSome: lanes the tap applies to (in the vector's lane order)
};

struct BorderBlock {
  int64_t ox, n;
  TapLanes taps[kMaxKernelWidth];
};

// The border blocks of every output row, in row order.
struct RowLayout {
  int count = 0;
  BorderBlock blocks[kMaxBorderBlocks];
};

// Calls interior4(ox) / interior1(ox) / border(ox, n) for one row's vectors in order:
// interior vectors four at a time, then single ones, border blocks for the rest. A last
// partial block is moved left to end at the row's end when the row has 8 outputs or more
// (it recomputes a few outputs, with the same values). Interior columns are [lo, hi).
template <class Interior4, class Interior1, class Border>
BRISK_DW_INLINE void walkRow(int64_t out, int64_t lo, int64_t hi, Interior4&& interior4, Interior1&& interior1,
                             Border&& border) {
  int64_t ox = 0;
  while (ox < out) {
    if (ox >= lo && ox + 4 * kLanes <= hi) {
      interior4(ox);
      ox += 4 * kLanes;
    } else if (ox >= lo && ox + kLanes <= hi) {
      interior1(ox);
      ox += kLanes;
    } else {
      if (ox + kLanes > out && out >= kLanes) ox = out - kLanes;
      const int64_t n = std::min<int64_t>(kLanes, out - ox);
      border(ox, n);
      ox += n;
    }
  }
}

// Which lanes of the block at ox (n outputs) read kernel column kx inside the row.
template <int S>
BRISK_DW_INLINE TapLanes tapLanes(int64_t ox, int64_t n, int64_t kx, const ConvDim& w) {
  TapLanes t;
  // Lane l reads input column e0 + S * l: valid lanes [lo, hi).
  const int64_t e0 = ox * S - w.pad + kx * w.dilation;
  const int64_t lo = e0 >= 0 ? 0 : (-e0 + S - 1) / S;
  const int64_t hi = e0 > w.in - 1 ? 0 : std::min(n, (w.in - 1 - e0) / S + 1);
  if (lo >= hi) return t;
  if (lo == 0 && hi == kLanes) {
    t.mode = TapLanes::kAll;
    return t;
  }
  t.mode = TapLanes::kSome;
  if constexpr (S == 1) {
    t.load_a = t.blend = laneMask(lo, hi);
    t.load_b = _mm256_setzero_si256();
  } else {
    // Elements p[2 lo .. 2 (hi - 1)] from a = p[0..8) and b = p[7..15).
    const int64_t first = 2 * lo, last = 2 * (hi - 1);
    t.load_a = laneMask(first, last + 1);
    t.load_b = laneMask(first - 7, last - 6);
    t.blend = _mm256_permute4x64_epi64(laneMask(lo, hi), 0xD8);  // evensPermuted's lane order
  }
  return t;
}

// False when a row needs more border blocks or the kernel is wider than RowLayout holds.
template <int S>
BRISK_DW_INLINE bool buildLayout(const ConvDim& w, int64_t lo, int64_t hi, RowLayout& layout) {
  if (w.kernel > kMaxKernelWidth) return false;
  bool fits = true;
  auto none = [](int64_t) {};
  walkRow(w.out, lo, hi, none, none, [&](int64_t ox, int64_t n) {
    if (layout.count == kMaxBorderBlocks) {
      fits = false;
      return;
    }
    BorderBlock& b = layout.blocks[layout.count++];
    b.ox = ox;
    b.n = n;
  });
  if (!fits) return false;
  for (int i = 0; i < layout.count; ++i) {
    BorderBlock& b = layout.blocks[i];
    for (int64_t kx = 0; kx < w.kernel; ++kx) b.taps[kx] = tapLanes<S>(b.ox, b.n, kx, w);
  }
  return true;
}

template <int S>
BRISK_DW_INLINE void borderBlock(const float* x, const float* k, float bias, const RowRange& rows, const ConvDim& h,
                                 const ConvDim& w, float* yrow, const BorderBlock& b) {
  __m256 acc = _mm256_set1_ps(bias);
  for (int64_t ky = rows.lo; ky < rows.hi; ++ky) {
    const float* row = x + (rows.first_input_row + ky * h.dilation) * w.in + b.ox * S - w.pad;
    const float* kr = k + ky * w.kernel;
    for (int64_t kx = 0; kx < w.kernel; ++kx) {
      const TapLanes& t = b.taps[kx];
      if (t.mode == TapLanes::kNone) continue;
      const __m256 wv = _mm256_set1_ps(kr[kx]);
      const float* p = row + kx * w.dilation;
      if (t.mode == TapLanes::kAll) {
        acc = _mm256_fmadd_ps(S == 1 ? _mm256_loadu_ps(p) : evensPermuted(p), wv, acc);
        continue;
      }
      const __m256 v =
          S == 1 ? _mm256_maskload_ps(p, t.load_a)
                 : _mm256_shuffle_ps(_mm256_maskload_ps(p, t.load_a), _mm256_maskload_ps(p + 7, t.load_b), 0xD8);
      acc = _mm256_blendv_ps(acc, _mm256_fmadd_ps(v, wv, acc), _mm256_castsi256_ps(t.blend));
    }
  }
  if (S == 2) acc = unpermute(acc);
  if (b.n == kLanes) {
    _mm256_storeu_ps(yrow + b.ox, acc);
  } else {
    _mm256_maskstore_ps(yrow + b.ox, laneMask(0, b.n), acc);
  }
}

// Planes [begin, end) with vectors (stride S, kernel width KW or 0 = any).
template <int S, int KW>
BRISK_DW_INLINE void vectorPlanes(const float* in, const float* weight, const float* bias, float* out, int64_t begin,
                                  int64_t end, int64_t channels, const ConvDim& h, const ConvDim& w, int64_t lo,
                                  int64_t hi, const RowLayout& layout) {
  const int64_t in_plane = h.in * w.in, out_plane = h.out * w.out, taps = h.kernel * w.kernel;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t c = p % channels;
    const float* x = in + p * in_plane;
    const float* k = weight + c * taps;
    const float b = bias ? bias[c] : 0.f;
    for (int64_t oy = 0; oy < h.out; ++oy) {
      const RowRange rows = rowRange(oy, h);
      float* yrow = out + p * out_plane + oy * w.out;
      int border = 0;
      walkRow(
          w.out, lo, hi, [&](int64_t ox) { interior<4, S, KW>(x, k, b, rows, h, w, yrow, ox); },
          [&](int64_t ox) { interior<1, S, KW>(x, k, b, rows, h, w, yrow, ox); },
          [&](int64_t, int64_t) { borderBlock<S>(x, k, b, rows, h, w, yrow, layout.blocks[border++]); });
    }
  }
}

// Any geometry, one output at a time.
void scalarPlanes(const float* in, const float* weight, const float* bias, float* out, int64_t begin, int64_t end,
                  int64_t channels, const ConvDim& h, const ConvDim& w) {
  const int64_t in_plane = h.in * w.in, out_plane = h.out * w.out, taps = h.kernel * w.kernel;
  for (int64_t p = begin; p < end; ++p) {
    const int64_t c = p % channels;
    for (int64_t oy = 0; oy < h.out; ++oy) {
      const RowRange rows = rowRange(oy, h);
      float* yrow = out + p * out_plane + oy * w.out;
      for (int64_t ox = 0; ox < w.out; ++ox)
        yrow[ox] = outputAt(in + p * in_plane, weight + c * taps, bias ? bias[c] : 0.f, rows, h, w, ox);
    }
  }
}

template <int S>
bool tryVectorPlanes(const float* in, const float* weight, const float* bias, float* out, int64_t begin, int64_t end,
                     int64_t channels, const ConvDim& h, const ConvDim& w) {
  // Interior columns [lo, hi): ox * stride - pad >= 0 and the last tap
  // ox * stride - pad + (kernel - 1) * dilation <= in - 1.
  const int64_t lo = std::min(w.out, (w.pad + S - 1) / S);
  const int64_t last = w.in - 1 - (w.kernel - 1) * w.dilation + w.pad;
  const int64_t hi = last < 0 ? 0 : std::min(w.out, last / S + 1);
  RowLayout layout;
  if (!buildLayout<S>(w, lo, hi, layout)) return false;
  if (w.kernel == 3) {
    vectorPlanes<S, 3>(in, weight, bias, out, begin, end, channels, h, w, lo, hi, layout);
  } else {
    vectorPlanes<S, 0>(in, weight, bias, out, begin, end, channels, h, w, lo, hi, layout);
  }
  return true;
}

}  // namespace

void depthwiseConv2dPlanes(const float* in, const float* weight, const float* bias, float* out, int64_t begin,
                           int64_t end, int64_t channels, const ConvDim& h, const ConvDim& w) {
  if (begin >= end) return;
  if (w.stride == 1 && tryVectorPlanes<1>(in, weight, bias, out, begin, end, channels, h, w)) return;
  if (w.stride == 2 && tryVectorPlanes<2>(in, weight, bias, out, begin, end, channels, h, w)) return;
  scalarPlanes(in, weight, bias, out, begin, end, channels, h, w);
}

#pragma GCC pop_options

}  // namespace brisk::ops_cpu::out
