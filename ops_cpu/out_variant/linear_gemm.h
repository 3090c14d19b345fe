#pragma once
// The two GEMM paths of linear / addmm with a constant weight (linear.cc), shared with
// kernels that compute a linear layer as one part of a fused op (ops_cpu/fused/), so
// such a kernel gets exactly the bits the unfused addmm kernel would have produced.
#include <ATen/ATen.h>

#include <cstdint>

#include "core/kernels/plugin.h"

namespace brisk::ops_cpu::out {

// Whether an input of m rows against a packed K x N weight takes the packed kernel
// (else the BLAS). Decided by instruction set and measured (one thread, Zen 3, against
// MKL's sgemm_ as ATen calls it, tools/bench:kernel_bench). Where AVX2 is the widest:
// 1.3-3.8x at 1-8 rows, 1.4-2x at 16, 1.1-1.2x at 64, and 1.0-2.3x at 512 rows except
// for weights of a million floats and more, where MKL's blocking is 5% ahead past 256
// rows, so those go to MKL. With AVX-512, whose wider BLAS and oneDNN kernels it was not
// measured against: up to 8 rows.
bool smallGemmTakes(int64_t m, int64_t k, int64_t n);
// Which inputs smallGemmTakes, for kernel descriptions.
const char* smallGemmRowsText();

// A frozen linear layer in small_gemm's packed layout.
struct PackedLinear {
  at::Tensor packed;  // smallGemmPackedSize(k, n) floats
  at::Tensor bias;    // undefined, or n contiguous floats
  int64_t k, n;
};

// `bias` as n contiguous floats added to every row, or undefined when it is not one row
// broadcast over the result ([n], [1, n], or one value: [], [1], [1, 1]).
at::Tensor rowBias(const at::Tensor& bias, int64_t n);

// Whether the packed kernel can serve this weight W^T ([K, N], any strides) and bias
// at all (rows are checked per call).
bool smallGemmServes(const at::Tensor& wt, const at::Tensor& bias);

// Packs W^T ([K, N]: linear's weight transposed, or addmm's mat2).
PackedLinear packLinear(const at::Tensor& wt, const at::Tensor& bias);

// y [m, p.n] = x [m, p.k] (rows contiguous) times the packed weight, plus its bias, on
// the intra-op threads (split by weight panels: any split gives the same bits).
void packedLinear(const float* x, int64_t m, const PackedLinear& p, float* y);

// Whether blasLinear applies: fp32 contiguous operands, 1-D bias, and the shapes for
// which ATen takes exactly that call.
bool blasLinearApplies(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias);

// The sgemm_ call of ATen's addmm_out(y, bias, x, w.t()) for row-major contiguous
// x [M, K], w [N, K], y [M, N] with N > 1 (bias null: mm_out's).
void blasLinear(const float* x, const float* w, const float* bias, float* y, int64_t m, int64_t k, int64_t n);

// Declares the plugin option ops_cpu.small_gemm (the packed kernel on or off) and
// returns its handle; every kernel that uses the packed kernel reads it. Declaring it
// again is harmless (the same declaration replaces itself).
PluginOption<bool> declareSmallGemmOption(PluginRegistrar& r);

}  // namespace brisk::ops_cpu::out
