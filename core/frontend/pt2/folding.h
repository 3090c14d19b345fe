#pragma once
// Load-time folding for PT2 programs. Frozen TorchScript gets both from torch.jit.freeze;
// a torch.export program arrives unfrozen, so the PT2 frontend does them itself:
//   - a node whose inputs are all constants (weights and what is computed from them
//     only, e.g. the core-ATen IR's permute(weight) feeding addmm) is computed once;
//   - an inference batch norm that is a convolution's only reader is folded into the
//     convolution's weight and bias (Options::optimize_numerics, as freeze's conv-bn
//     fold: the same values up to rounding).
#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/frontend/pt2/schema.h"
#include "core/graph/constant_eval.h"  // evaluateAtLoad

namespace brisk {
class Value;
}

namespace brisk::pt2 {

// How many times each tensor name is read in `graph` (by its nodes, and as an output
// of the program), and the last node reading it: a convolution whose output has one
// reader may absorb it.
struct TensorReads {
  std::unordered_map<std::string, int> count;
  std::unordered_map<std::string, const Json*> reader;
};
TensorReads tensorReads(const Json& graph);

// conv(x, w, b) followed by batch_norm(., gamma, beta, mean, var, eps) in inference
// == conv(x, w * s, (b - mean) * s + beta) with s = gamma / sqrt(var + eps), per
// output channel. Undefined gamma/beta/bias mean 1/0/0.
std::pair<at::Tensor, at::Tensor> foldBatchNorm(const at::Tensor& w, const at::Tensor& bias, const at::Tensor& gamma,
                                                const at::Tensor& beta, const at::Tensor& mean, const at::Tensor& var,
                                                double eps);

}  // namespace brisk::pt2
