#pragma once
// ATen's oneDNN fusion ops (the mkldnn:: namespace the wheel registers with the
// dispatcher; what Inductor's CPU freezing path lowers convolutions and linear layers
// to), called boxed. libtorch_cpu links oneDNN statically and exports none of its
// symbols, so the dispatcher is the one way to reach torch's oneDNN from a plugin
// (docs/stack.md: why this route and not a second oneDNN).
//
//   _convolution_pointwise(X, W, B, padding, stride, dilation, groups, attr, scalars, algorithm)
//   _convolution_pointwise.binary(X, other, W, B, padding, stride, dilation, groups,
//                                 binary_attr, alpha, unary_attr, unary_scalars, unary_algorithm)
//   _linear_pointwise(X, W, B, attr, scalars, algorithm)
//   _linear_pointwise.binary(X, other, W, B, attr)
//   _reorder_convolution_weight / _reorder_linear_weight: the weight in oneDNN's
//   blocked format (an opaque mkldnn tensor), done once at compile time.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include <memory>
#include <string>
#include <vector>

#include "core/kernels/kernel.h"

namespace brisk::onednn {

// A resolved operator handle; throws std::runtime_error at construction when this
// libtorch lacks the op (a build without oneDNN).
c10::OperatorHandle mkldnnOp(const char* name, const char* overload);

// Per-Runtime argument stack for boxed calls, reserved once: no allocation per call.
class CallState final : public KernelState {
 public:
  CallState() { stack.reserve(16); }
  torch::jit::Stack stack;
  std::unique_ptr<const c10::IValue> overflow;  // a weight packed for a row count beyond the cache (shape_cache.h)
};

// Calls `op` on `stack` (its arguments) and returns its one result, leaving the stack
// empty for the next call.
inline at::Tensor callOne(const c10::OperatorHandle& op, torch::jit::Stack& stack) {
  op.callBoxed(stack);
  at::Tensor r = std::move(stack.back()).toTensor();
  stack.clear();
  return r;
}

// The scalars list of a unary post-op as the ops take it (Scalar?[]).
c10::IValue unaryScalars(const std::vector<double>& scalars);
c10::IValue optionalString(const std::optional<std::string>& s);

}  // namespace brisk::onednn
