#pragma once
// y [m, n] = x [m, k] W^T + b for a weight fixed at load, as the unfused aten::addmm
// kernel with a constant weight (out_variant/linear.cc) computes it: the packed small
// GEMM for the row counts it takes (plugin option ops_cpu.small_gemm on), else the
// BLAS call ATen's addmm makes. One helper for the recurrent kernels (lstm_step.cc,
// gru_step.cc, native/rnn_layers.cc), so a fused step's gate pre-activations are the
// bits the unfused graph would have produced.
#include <ATen/ATen.h>

#include <cstdint>
#include <optional>

#include "ops_cpu/out_variant/linear_gemm.h"

namespace brisk::ops_cpu {

class FrozenLinear {
 public:
  // `w` is W ([n, k]) as given: the BLAS path needs it contiguous, and is left off
  // when it is not (callers that hold W^T pass its transposed view, as ATen's addmm
  // does with mat2). `bias` is [n] or undefined. Packs the weight when `small_gemm`.
  FrozenLinear(const at::Tensor& w, const at::Tensor& bias, bool small_gemm);

  // Whether run() serves m rows without ATen (the small GEMM or the BLAS call).
  bool serves(int64_t m) const;
  // y = x W^T + b; requires serves(m). x and y row-major contiguous, not overlapping.
  void run(const float* x, int64_t m, float* y) const;

  bool packed() const { return packed_.has_value(); }
  bool blas() const { return blas_; }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }

 private:
  at::Tensor w_, bias_;  // bias_: n contiguous floats, or undefined
  int64_t k_, n_;
  std::optional<out::PackedLinear> packed_;
  bool blas_ = false;
};

}  // namespace brisk::ops_cpu
