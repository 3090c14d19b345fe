#pragma once
// y = x W (+ bias) for x [M, K] against a weight W [K, N] packed once at load (linear's
// W^T): brisk's own kernel for linear layers with frozen weights, used instead of the
// BLAS's sgemm_ (linear_gemm.h says for which row counts, by instruction set).
//
// Why it exists: a BLAS sgemm_ call packs the weight into a buffer before computing;
// with one to a few input rows that copy costs as much as the product itself, and at
// every row count it is work a frozen weight does not need. Here the weight is packed
// once at load, nothing is allocated or shared per call, and the speed does not depend
// on the BLAS's kernel choice (MKL picks its kernels by CPU vendor). One thread on
// Zen 3 (AVX2), against MKL's sgemm_ as ATen calls it: 1.3-3.8x at 1-8 rows, 1.5-2x at
// 9-16, 1.1-1.2x at 64-2048 rows (95-97 GFLOP/s against 80-87), and 2.3x for a
// 10-column layer (tools/bench:kernel_bench).
//
// Weight layout: packed once at load into panels of 16 columns, each K x 16 floats row
// after row (the last panel zero padded to 16), so a tile of outputs streams its
// weights from consecutive memory. Tiles are up to 6 rows x 16 columns (one or two rows
// span several panels), and long depths run in passes of 256 that keep a panel's slice
// in L1 while every row block reads it.
//
// Order of operations, fixed whatever the blocking, threading or CPU: each output
// starts at +0, accumulates x[i, k] * W[k, j] for k = 0, 1, ..., K-1 with one fused
// multiply-add each, then adds bias[j] once (when given). Tests check it bit for bit.
// It is not ATen's: the BLAS's kernels group the products differently, so results
// differ from the interpreter's in the last bits (the plugin option ops_cpu.small_gemm turns this
// kernel off for users who need ATen's exact values).
#include <cstdint>

namespace brisk::ops_cpu::out {

// Columns per weight panel: the unit of work callers split across threads.
constexpr int64_t kSmallGemmPanelCols = 16;

// True when this CPU has AVX2 and FMA (checked once).
bool smallGemmAvailable();

// Panels of an N-column weight.
int64_t smallGemmPanels(int64_t n);

// Floats of the packed form of a K x N weight.
int64_t smallGemmPackedSize(int64_t k, int64_t n);

// Packs W (element [kk][j] at w[kk * stride_k + j * stride_n]: for linear's weight
// [N, K], stride_k = 1 and stride_n = K) into `packed` (smallGemmPackedSize floats).
void smallGemmPack(const float* w, int64_t stride_k, int64_t stride_n, int64_t k, int64_t n, float* packed);

// Rows i < m of x (row stride ldx) times the packed K x N weight, columns of panels
// [panel_begin, panel_end), into y (row stride ldy):
//   y[i * ldy + j] = (fma chain over kk of x[i * ldx + kk] * W[kk][j]) + bias[j]
// `bias` may be null (then no addition). `y` must not overlap the other operands.
// Single-threaded: callers split panels across threads (any split gives the same
// bits). Requires smallGemmAvailable(). k may be 0 (outputs are +0 or the bias).
void smallGemm(const float* x, int64_t ldx, const float* packed, const float* bias, float* y, int64_t ldy, int64_t m,
               int64_t k, int64_t n, int64_t panel_begin, int64_t panel_end);

}  // namespace brisk::ops_cpu::out
