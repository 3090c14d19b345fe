#pragma once
// y = x W (+ bias) for a few rows x [M, K] against a weight W [K, N] stored row-major
// (linear's W^T, made contiguous once at load): brisk's own kernel for linear layers at
// small batch, used instead of the BLAS's sgemm_.
//
// Why it exists (measured on Debian 12's OpenBLAS 0.3.21, the BLAS libtorch called before
// the move to PyPI's torch with MKL; with MKL the zoo's mlp at batch 1 is still faster):
// - Every sgemm_ call packs the whole weight into a buffer before computing. With one
//   to a few input rows that copy costs as much as the product itself.
// - The buffer comes from OpenBLAS's shared buffer table, taken and released under one
//   process-wide mutex (Debian builds it without USE_TLS). Threads running small models
//   contend on that lock and on the table's cache lines: two threads doing deepandwide's
//   three GEMMs scale 1.5x, where the same arithmetic without OpenBLAS scales 2x.
// - OpenBLAS 0.3.21 does not recognise recent Intel CPUs and falls back to its generic
//   SSE (Prescott) kernels unless OPENBLAS_CORETYPE is set: several times slower.
// Here the weight is read where it lies, nothing is allocated or shared, and the speed
// does not depend on the BLAS's kernel choice.
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
// differ from the interpreter's in the last bits (Options::small_gemm turns this
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
