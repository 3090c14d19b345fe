// brisk's small-batch GEMM; see small_gemm.h for why and for the order of operations.
#include "ops_cpu/simd/small_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <utility>

#include "ops_cpu/simd/cpu_features.h"

// The vector helpers below are always inlined into target-specific callers, so the
// AVX argument-passing ABI note GCC emits for them does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace brisk::ops_cpu::out {

bool smallGemmAvailable() { return cpuHasAvx2Fma(); }

namespace {

// A panel's row length: its columns rounded up to whole vectors.
int64_t panelWidth(int64_t cols) { return (cols + 7) / 8 * 8; }

}  // namespace

int64_t smallGemmPanels(int64_t n) { return (n + kSmallGemmPanelCols - 1) / kSmallGemmPanelCols; }

int64_t smallGemmPackedSize(int64_t k, int64_t n) {
  if (n <= 0) return 0;
  const int64_t full = (n - 1) / kSmallGemmPanelCols;  // every panel but the last is full
  return k * (full * kSmallGemmPanelCols + panelWidth(n - full * kSmallGemmPanelCols));
}

void smallGemmPack(const float* w, int64_t stride_k, int64_t stride_n, int64_t k, int64_t n, float* packed) {
  for (int64_t j = 0; j < n; j += kSmallGemmPanelCols) {
    const int64_t cols = std::min(kSmallGemmPanelCols, n - j);
    const int64_t width = panelWidth(cols);
    float* panel = packed + j * k;
    for (int64_t kk = 0; kk < k; ++kk) {
      float* row = panel + kk * width;
      for (int64_t c = 0; c < cols; ++c) row[c] = w[kk * stride_k + (j + c) * stride_n];
      std::fill(row + cols, row + width, 0.0f);
    }
  }
}

// Everything below is compiled for AVX2 + FMA; callers check smallGemmAvailable().
#pragma GCC push_options
#pragma GCC target("avx2,fma")

namespace {

constexpr int kLanes = 8;
constexpr int kMaxRows = 4;

// Vectors of 8 columns per block for a block of R rows: R * V accumulators, V weight
// vectors (shared by the rows) and a broadcast must fit the 16 ymm registers. One row
// reads its weights straight into the FMAs, so it can afford 8 accumulators: enough
// independent chains to hide the FMA latency. The block widths (64, 32, 16 and 16
// columns) all divide the panel width, so only a panel's last block is ever partial.
constexpr int vectorsFor(int rows) { return rows == 1 ? 8 : rows == 2 ? 4 : 2; }
static_assert(kSmallGemmPanelCols % (vectorsFor(1) * kLanes) == 0);

// Lanes [0, n) set, for the last, partial vector of a block.
inline __m256i laneMask(int64_t n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), idx);
}

template <bool kPartial>
inline __attribute__((always_inline)) __m256 load(const float* p, __m256i mask) {
  if constexpr (kPartial) return _mm256_maskload_ps(p, mask);
  return _mm256_loadu_ps(p);
}

template <bool kPartial>
inline __attribute__((always_inline)) void store(float* p, __m256i mask, __m256 v) {
  if constexpr (kPartial)
    _mm256_maskstore_ps(p, mask, v);
  else
    _mm256_storeu_ps(p, v);
}

// R rows x V vectors of outputs from a panel of row stride `ldw`. The panel is padded
// to whole vectors, so weights load in full; when kPartial only the first `last_lanes`
// lanes of the last vector are real columns: the bias load and the stores skip the rest.
template <int R, int V, bool kPartial>
void block(const float* x, int64_t ldx, const float* w, int64_t ldw, const float* bias, float* y, int64_t ldy,
           int64_t k, int64_t last_lanes) {
  const __m256i mask = laneMask(last_lanes);
  __m256 acc[R][V];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_ps();
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* wk = w + kk * ldw;
    __m256 wv[V];
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) wv[v] = _mm256_loadu_ps(wk + v * kLanes);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256 xb = _mm256_broadcast_ss(x + r * ldx + kk);
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(xb, wv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    const bool partial = kPartial && v == V - 1;
    __m256 b = _mm256_setzero_ps();
    if (bias) b = partial ? load<true>(bias + v * kLanes, mask) : load<false>(bias + v * kLanes, mask);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m256 out = bias ? _mm256_add_ps(acc[r][v], b) : acc[r][v];
      if (partial)
        store<true>(y + r * ldy + v * kLanes, mask, out);
      else
        store<false>(y + r * ldy + v * kLanes, mask, out);
    }
  }
}

// Runs block<R, vectors, partial>: the row's last block may need fewer vectors than
// vectorsFor(R).
template <int R, int V = 1>
void blockOf(int64_t vectors, bool partial, const float* x, int64_t ldx, const float* w, int64_t ldw, const float* bias,
             float* y, int64_t ldy, int64_t k, int64_t last_lanes) {
  if constexpr (V < vectorsFor(R)) {
    if (vectors > V) return blockOf<R, V + 1>(vectors, partial, x, ldx, w, ldw, bias, y, ldy, k, last_lanes);
  }
  if (partial)
    block<R, V, true>(x, ldx, w, ldw, bias, y, ldy, k, last_lanes);
  else
    block<R, V, false>(x, ldx, w, ldw, bias, y, ldy, k, last_lanes);
}

// Columns [0, cols) of one panel (row stride `width`) for R consecutive rows.
template <int R>
void rowBlock(const float* x, int64_t ldx, const float* panel, int64_t width, const float* bias, float* y, int64_t ldy,
              int64_t k, int64_t cols) {
  constexpr int64_t kBlockCols = int64_t{vectorsFor(R)} * kLanes;
  for (int64_t j = 0; j < cols; j += kBlockCols) {
    const int64_t n = std::min(kBlockCols, cols - j);
    const int64_t vectors = (n + kLanes - 1) / kLanes;
    const int64_t last = n - (vectors - 1) * kLanes;
    blockOf<R>(vectors, last != kLanes, x, ldx, panel + j, width, bias ? bias + j : nullptr, y + j, ldy, k, last);
  }
}

}  // namespace

void smallGemm(const float* x, int64_t ldx, const float* packed, const float* bias, float* y, int64_t ldy, int64_t m,
               int64_t k, int64_t n, int64_t panel_begin, int64_t panel_end) {
  for (int64_t p = panel_begin; p < panel_end; ++p) {
    const int64_t j = p * kSmallGemmPanelCols;
    const int64_t cols = std::min(kSmallGemmPanelCols, n - j);
    const int64_t width = panelWidth(cols);
    const float* panel = packed + j * k;  // earlier panels are full: k x 64 each
    const float* bj = bias ? bias + j : nullptr;
    // Every row block runs over this panel before the next panel: the panel is read
    // from memory once and from cache by the other row blocks.
    for (int64_t i = 0; i < m; i += kMaxRows) {
      const float* xi = x + i * ldx;
      float* yi = y + i * ldy + j;
      switch (std::min<int64_t>(kMaxRows, m - i)) {
        case 1:
          rowBlock<1>(xi, ldx, panel, width, bj, yi, ldy, k, cols);
          break;
        case 2:
          rowBlock<2>(xi, ldx, panel, width, bj, yi, ldy, k, cols);
          break;
        case 3:
          rowBlock<3>(xi, ldx, panel, width, bj, yi, ldy, k, cols);
          break;
        default:
          rowBlock<4>(xi, ldx, panel, width, bj, yi, ldy, k, cols);
          break;
      }
    }
  }
}

#pragma GCC pop_options

}  // namespace brisk::ops_cpu::out
