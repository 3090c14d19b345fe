#pragma once
// The two GEMM paths of linear / addmm with a constant weight (linear.cc), shared with
// kernels that compute a linear layer as one part of a fused op (ops_cpu/fused/), so
// such a kernel gets exactly the bits the unfused addmm kernel would have produced.
#include <ATen/ATen.h>

#include <cstdint>

#include "core/kernels/plugin.h"

namespace brisk::ops_cpu::out {

// Inputs of up to this many rows take the packed kernel, larger ones the BLAS (linear.cc
// has the measurements behind it).
constexpr int64_t kSmallGemmMaxRows = 8;

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
