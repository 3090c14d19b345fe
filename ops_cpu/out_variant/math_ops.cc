// Pointwise math: exp, sin, cos, abs, bitwise_not (unary), maximum, minimum,
// __and__.Tensor / bitwise_and.Tensor (binary), through the structured at::cpu::*_out
// kernels: the same TensorIterator loops as the dispatcher's op, so the same bits.
//
// Each kernel's `ok` names the dtypes its out path serves; the others (bool abs, float
// bitwise ops, complex maximum) take the dispatcher's functional op, which raises
// ATen's own error or computes what ATen computes (complex abs is real-valued).
// In-place reuse (core/graph/inplace_reuse.h) does not mark these ops, so they always
// write their own (retained, plannable) output.
#include <ATen/CPUFunctions.h>
#include <ATen/native/TypeProperties.h>

#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {
namespace {

bool anyDtype(const at::Tensor&) { return true; }
bool notBoolOrComplex(const at::Tensor& x) {
  return x.scalar_type() != at::kBool && !c10::isComplexType(x.scalar_type());
}
bool integral(const at::Tensor& x) { return c10::isIntegralType(x.scalar_type(), /*includeBool=*/true); }
c10::ScalarType sameDtype(const at::Tensor& x) { return x.scalar_type(); }

// out_fn(out, x) writes the op's result into `out` (dtype `dtype(x)`); generic(x) is the
// dispatcher's functional op.
template <class Ok, class Dtype, class OutFn, class Generic>
std::unique_ptr<Kernel> unaryKernel(KernelBuildContext& b, std::string desc, Ok ok, Dtype dtype, OutFn out_fn,
                                    Generic generic) {
  if (numInputs(b) != 1) return nullptr;
  return makeKernel(std::move(desc), [ok, dtype, out_fn, generic](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x) || !ok(x)) {
      ctx.output(0) = generic(x);
      return;
    }
    writeOut(
        ctx, dtype(x), [&](at::Tensor& o) { out_fn(o, x); }, [&] { return generic(x); });
  });
}

#define BRISK_UNARY(NAME, OK, DTYPE)                                                                                   \
  std::unique_ptr<Kernel> NAME##Kernel(KernelBuildContext& b) {                                                        \
    return unaryKernel(                                                                                                \
        b, "at::cpu::" #NAME "_out", OK, DTYPE, [](at::Tensor& o, const at::Tensor& x) { at::cpu::NAME##_out(o, x); }, \
        [](const at::Tensor& x) { return at::NAME(x); });                                                              \
  }
// exp / sin / cos of integers and bools give the default float dtype.
c10::ScalarType floatDtype(const at::Tensor& x) { return floatResultType(x.scalar_type()); }
BRISK_UNARY(exp, anyDtype, floatDtype)
BRISK_UNARY(sin, anyDtype, floatDtype)
BRISK_UNARY(cos, anyDtype, floatDtype)
BRISK_UNARY(abs, notBoolOrComplex, sameDtype)
BRISK_UNARY(bitwise_not, integral, sameDtype)
#undef BRISK_UNARY

// Tensor-Tensor op with ATen's promoted result dtype; `ok` (as for unaryKernel) must hold
// for both operands.
template <class Ok, class OutFn, class Generic>
std::unique_ptr<Kernel> binaryKernel(KernelBuildContext& b, std::string desc, Ok ok, OutFn out_fn, Generic generic) {
  if (numInputs(b) != 2) return nullptr;
  return makeKernel(std::move(desc), [ok, out_fn, generic](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    const at::Tensor& y = ctx.tensor(1);
    if (!isDenseCpu(x) || !isDenseCpu(y) || !ok(x) || !ok(y)) {
      ctx.output(0) = generic(x, y);
      return;
    }
    writeOut(
        ctx, at::native::result_type(x, y), [&](at::Tensor& o) { out_fn(o, x, y); }, [&] { return generic(x, y); });
  });
}

bool notComplex(const at::Tensor& x) { return !c10::isComplexType(x.scalar_type()); }

#define BRISK_BINARY(NAME, OK)                                                                         \
  std::unique_ptr<Kernel> NAME##Kernel(KernelBuildContext& b) {                                        \
    return binaryKernel(                                                                               \
        b, "at::cpu::" #NAME "_out", OK,                                                               \
        [](at::Tensor& o, const at::Tensor& x, const at::Tensor& y) { at::cpu::NAME##_out(o, x, y); }, \
        [](const at::Tensor& x, const at::Tensor& y) { return at::NAME(x, y); });                      \
  }
BRISK_BINARY(maximum, notComplex)
BRISK_BINARY(minimum, notComplex)
// __and__.Tensor is ATen's bitwise_and.Tensor (TorchScript's `a & b`).
BRISK_BINARY(bitwise_and, integral)
#undef BRISK_BINARY

}  // namespace

void registerMathOps(PluginRegistrar& r) {
  r.outVariant("aten::exp", expKernel);
  r.outVariant("aten::sin", sinKernel);
  r.outVariant("aten::cos", cosKernel);
  r.outVariant("aten::abs", absKernel);
  r.outVariant("aten::bitwise_not", bitwise_notKernel);
  r.outVariant("aten::maximum", maximumKernel);
  r.outVariant("aten::minimum", minimumKernel);
  r.outVariant("aten::__and__.Tensor", bitwise_andKernel);
  r.outVariant("aten::bitwise_and.Tensor", bitwise_andKernel);
}

}  // namespace brisk::ops_cpu::out
