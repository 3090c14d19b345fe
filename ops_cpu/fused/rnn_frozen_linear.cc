// FrozenLinear (rnn_frozen_linear.h).
#include "ops_cpu/fused/rnn_frozen_linear.h"

#include <climits>

namespace brisk::ops_cpu {

FrozenLinear::FrozenLinear(const at::Tensor& w, const at::Tensor& bias, bool small_gemm)
    : w_(w), k_(w.size(1)), n_(w.size(0)) {
  if (bias.defined()) bias_ = out::rowBias(bias, n_);
  if (small_gemm && out::smallGemmServes(w.t(), bias)) packed_ = out::packLinear(w.t(), bias);
  blas_ = out::blasLinearApplies(at::empty({1, k_}, w.options()), w, bias);
}

bool FrozenLinear::serves(int64_t m) const {
  return (packed_ && out::smallGemmTakes(m, k_, n_)) || (blas_ && m <= INT_MAX);
}

void FrozenLinear::run(const float* x, int64_t m, float* y) const {
  if (packed_ && out::smallGemmTakes(m, k_, n_))
    out::packedLinear(x, m, *packed_, y);
  else
    out::blasLinear(x, w_.data_ptr<float>(), bias_.defined() ? bias_.data_ptr<float>() : nullptr, y, m, k_, n_);
}

}  // namespace brisk::ops_cpu
