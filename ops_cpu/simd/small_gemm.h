#pragma once
// y = x W (+ bias) for a few rows x [M, K] against a weight W [K, N] stored row-major
// (linear's W^T, made contiguous once at load): brisk's own kernel for linear layers at
// small batch, used instead of the BLAS's sgemm_.
//
// Why it exists: a BLAS sgemm_ call packs the weight into a buffer before computing, and
// with one to a few input rows that copy costs as much as the product itself. Here the
// weight is packed once at load, nothing is allocated or shared per call, and the speed
// does not depend on the BLAS's kernel choice. Against MKL's sgemm_ (the BLAS of PyPI's
// torch) it is 1.25-3.8x faster at 1-8 rows (tools/bench:kernel_bench); against the
// OpenBLAS that brisk used before, it also avoided a process-wide buffer lock.
//
// Weight layout: packed once at load into panels of 64 columns, each K x 64 floats
// row after row (the last panel K x its columns rounded up to 8, zero padded), so a
// block of outputs streams its weights from consecutive memory instead of touching a
// new page per k.
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
constexpr int64_t kSmallGemmPanelCols = 64;

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
