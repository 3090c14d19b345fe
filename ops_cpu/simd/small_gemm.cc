// brisk's packed-weight GEMM; see small_gemm.h for why and for the order of operations.
#include "ops_cpu/simd/small_gemm.h"

#include <immintrin.h>

#include <algorithm>

#include "ops_cpu/simd/cpu_features.h"

// The vector helpers below are always inlined into target-specific callers, so the
// AVX argument-passing ABI note GCC emits for them does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace brisk::ops_cpu::out {

bool smallGemmAvailable() { return cpuHasAvx2Fma(); }

int64_t smallGemmPanels(int64_t n) { return (n + kSmallGemmPanelCols - 1) / kSmallGemmPanelCols; }

int64_t smallGemmPackedSize(int64_t k, int64_t n) { return smallGemmPanels(n) * kSmallGemmPanelCols * k; }

void smallGemmPack(const float* w, int64_t stride_k, int64_t stride_n, int64_t k, int64_t n, float* packed) {
  for (int64_t j = 0; j < n; j += kSmallGemmPanelCols) {
    const int64_t cols = std::min(kSmallGemmPanelCols, n - j);
    float* panel = packed + j * k;
    for (int64_t kk = 0; kk < k; ++kk) {
      float* row = panel + kk * kSmallGemmPanelCols;
      for (int64_t c = 0; c < cols; ++c) row[c] = w[kk * stride_k + (j + c) * stride_n];
      std::fill(row + cols, row + kSmallGemmPanelCols, 0.0f);
    }
  }
}

// Everything below is compiled for AVX2 + FMA; callers check smallGemmAvailable().
#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace {

constexpr int kLanes = 8;
constexpr int kPanelVectors = kSmallGemmPanelCols / kLanes;
static_assert(kPanelVectors == 2);

// Depth of one pass over a panel: its kDepthBlock x 16 floats (16 KB) stay in the
// 32 KB L1 while every row block of the call reads them. A longer K runs in several
// passes that keep the partial sums in y: each output's chain of fused multiply-adds is
// the same, so the blocking does not change a bit.
constexpr int64_t kDepthBlock = 256;
// Rows per block of x within a depth pass: 128 x 256 floats (128 KB) stay in the L2
// while every panel of the call reads them (only batches above 128 rows have several).
constexpr int64_t kRowBlock = 128;
// When all of x is at most this many floats (64 KB: a few rows), it stays in the L2
// through the whole call, and each panel is instead read once from start to end, all
// its depth passes in a row: one sequential stream over the packed weight. Walking the
// panels once per depth pass jumps 16 * k floats between 16 KB reads, which the
// hardware prefetcher does not follow: a cold 1280 x 1000 weight at 8 rows (MobileNet's
// classifier, evicted by the convolutions before it) took 710 us that way.
constexpr int64_t kStreamPanelsMaxX = 16 * 1024;

// Lanes [0, n) set, for the last, partial vector of a panel.
inline __m256i laneMask(int64_t n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), idx);
}

// Where a tile's outputs go: `cols` real columns (the last vector may be partial),
// whether this pass starts the sums (else they are read back from y) and whether it
// ends them (then the bias is added).
struct Tile {
  float* y;
  int64_t ldy;
  const float* bias;  // at the tile's first column; null: none
  int64_t cols;
  bool first, last;
};

// R rows x P panels of outputs (R * P * 2 accumulators) over depths [0, k) of the
// panels at `w` (panel p at w + p * panel_stride, row kk at + kk * 16) and of the rows
// of x (row r at x + r * ldx).
template <int R, int P>
void tile(const float* x, int64_t ldx, const float* w, int64_t panel_stride, int64_t k, const Tile& t) {
  constexpr int V = P * kPanelVectors;
  const int64_t full = t.cols / kLanes;  // vectors with every lane real
  const __m256i mask = laneMask(t.cols - full * kLanes);
  __m256 acc[R][V];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      float* yv = t.y + r * t.ldy + v * kLanes;
      acc[r][v] = t.first ? _mm256_setzero_ps()
                          : v < full ? _mm256_loadu_ps(yv) : v == full ? _mm256_maskload_ps(yv, mask) : _mm256_setzero_ps();
    }
  for (int64_t kk = 0; kk < k; ++kk) {
    __m256 wv[V];
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v)
      wv[v] = _mm256_loadu_ps(w + (v / kPanelVectors) * panel_stride + kk * kSmallGemmPanelCols + (v % kPanelVectors) * kLanes);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 xb = _mm256_broadcast_ss(x + r * ldx + kk);
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(xb, wv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    if (v > full || (v == full && t.cols == full * kLanes)) break;  // past the last column
    const bool partial = v == full;
    __m256 b = _mm256_setzero_ps();
    const bool add_bias = t.last && t.bias;
    if (add_bias) b = partial ? _mm256_maskload_ps(t.bias + v * kLanes, mask) : _mm256_loadu_ps(t.bias + v * kLanes);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 out = add_bias ? _mm256_add_ps(acc[r][v], b) : acc[r][v];
      float* yv = t.y + r * t.ldy + v * kLanes;
      if (partial)
        _mm256_maskstore_ps(yv, mask, out);
      else
        _mm256_storeu_ps(yv, out);
    }
  }
}

constexpr int64_t kMaxTileRows = 6;

// Rows of the next tile when `left` rows remain: 6 while that leaves no lone row or
// pair behind (a 1- or 2-row tile over one panel keeps too few chains busy), so 7 and 8
// rows run as 4 + 3 and 4 + 4.
int64_t tileRows(int64_t left) { return left == 7 || left == 8 ? 4 : std::min(kMaxTileRows, left); }

// Panels per tile: one or two rows need several panels for enough independent chains of
// fused multiply-adds to hide their latency; more rows fill the registers with one.
int64_t panelsPerTile(int64_t m, int64_t panels_left) {
  const int64_t want = m == 1 ? 4 : m == 2 ? 2 : 1;
  return want == 4 && panels_left < 4 ? std::min<int64_t>(panels_left, 2) : std::min(want, panels_left);
}

// tile<rows, panels> for rows in [1, 6] and the panel counts panelsPerTile picks: R * P
// * 2 accumulators, the panel vectors and a broadcast fit the 16 ymm registers.
void runTile(int64_t rows, int64_t panels, const float* x, int64_t ldx, const float* w, int64_t panel_stride,
             int64_t k, const Tile& t) {
  switch (rows * 8 + panels) {
    case 1 * 8 + 4: return tile<1, 4>(x, ldx, w, panel_stride, k, t);
    case 1 * 8 + 2: return tile<1, 2>(x, ldx, w, panel_stride, k, t);
    case 1 * 8 + 1: return tile<1, 1>(x, ldx, w, panel_stride, k, t);
    case 2 * 8 + 2: return tile<2, 2>(x, ldx, w, panel_stride, k, t);
    case 2 * 8 + 1: return tile<2, 1>(x, ldx, w, panel_stride, k, t);
    case 3 * 8 + 1: return tile<3, 1>(x, ldx, w, panel_stride, k, t);
    case 4 * 8 + 1: return tile<4, 1>(x, ldx, w, panel_stride, k, t);
    case 5 * 8 + 1: return tile<5, 1>(x, ldx, w, panel_stride, k, t);
    default: return tile<6, 1>(x, ldx, w, panel_stride, k, t);
  }
}

}  // namespace

void smallGemm(const float* x, int64_t ldx, const float* packed, const float* bias, float* y, int64_t ldy, int64_t m,
               int64_t k, int64_t n, int64_t panel_begin, int64_t panel_end) {
  const int64_t panel_stride = kSmallGemmPanelCols * k;
  if (k == 0) {  // no depth: each output is +0, plus the bias
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = panel_begin * kSmallGemmPanelCols; j < std::min(n, panel_end * kSmallGemmPanelCols); ++j)
        y[i * ldy + j] = bias ? 0.0f + bias[j] : 0.0f;
    return;
  }
  // One depth pass of the panels [p, p + panels) over rows [i0, i_end): every row tile
  // reads these panels' weights from L1; the rows of x come from L2. Each output's
  // passes run in increasing depth in either loop order below, so both give the same
  // bits.
  auto pass = [&](int64_t k0, int64_t i0, int64_t i_end, int64_t p, int64_t panels) {
    const int64_t depth = std::min(kDepthBlock, k - k0);
    const int64_t j = p * kSmallGemmPanelCols;
    const int64_t cols = std::min(n - j, panels * kSmallGemmPanelCols);
    const float* w = packed + p * panel_stride + k0 * kSmallGemmPanelCols;
    for (int64_t i = i0; i < i_end;) {
      const int64_t rows = tileRows(i_end - i);
      const Tile t{y + i * ldy + j, ldy, bias ? bias + j : nullptr, cols, k0 == 0, k0 + depth == k};
      runTile(rows, panels, x + i * ldx + k0, ldx, w, panel_stride, depth, t);
      i += rows;
    }
  };
  if (m * k <= kStreamPanelsMaxX) {
    for (int64_t p = panel_begin; p < panel_end;) {
      const int64_t panels = panelsPerTile(m, panel_end - p);
      for (int64_t k0 = 0; k0 < k; k0 += kDepthBlock) pass(k0, 0, m, p, panels);
      p += panels;
    }
    return;
  }
  for (int64_t k0 = 0; k0 < k; k0 += kDepthBlock)
    for (int64_t i0 = 0; i0 < m; i0 += kRowBlock)
      for (int64_t p = panel_begin; p < panel_end;) {
        const int64_t panels = panelsPerTile(m, panel_end - p);
        pass(k0, i0, std::min(m, i0 + kRowBlock), p, panels);
        p += panels;
      }
}

#pragma GCC pop_options

}  // namespace brisk::ops_cpu::out
