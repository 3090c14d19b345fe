#pragma once
// The second operand of a binary elementwise kernel: a tensor input, or a Scalar input
// wrapped as a 0-dim "wrapped number" tensor (as ATen does for the Scalar overloads, so
// type promotion matches), precomputed at load when the scalar is a constant.
#include <ATen/ScalarOps.h>

#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/out_variant/small_scalar.h"

namespace brisk::ops_cpu::out {

struct Operand {
  bool is_scalar = false;
  bool is_const = false;
  size_t index = 0;
  at::Tensor wrapped;
  small::Num num;  // the constant Scalar's value, for the small-tensor fast path

  // The Scalar operand's value without wrapping it (small-tensor fast path).
  small::Num scalarNum(const KernelContext& ctx) const { return is_const ? num : small::Num::of(ctx.input(index)); }

  c10::MaybeOwned<at::Tensor> get(const KernelContext& ctx) const {
    if (!is_scalar) return c10::MaybeOwned<at::Tensor>::borrowed(ctx.tensor(index));
    if (is_const) return c10::MaybeOwned<at::Tensor>::borrowed(wrapped);
    return c10::MaybeOwned<at::Tensor>::owned(at::native::wrapped_scalar_tensor(ctx.input(index).toScalar()));
  }
};

inline Operand tensorOperand(size_t i) {
  Operand o;
  o.index = i;
  return o;
}

inline Operand scalarOperand(KernelBuildContext& b, size_t i) {
  Operand o;
  o.is_scalar = true;
  o.index = i;
  if (auto s = constScalar(b, i)) {
    o.is_const = true;
    o.wrapped = at::native::wrapped_scalar_tensor(*s);
    o.num = small::Num::of(*s);
  }
  return o;
}

}  // namespace brisk::ops_cpu::out
