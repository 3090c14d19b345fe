// More scalar ops of scripted models, and the tensor ops that go with them:
//  * int / float remainder (Python's sign rule) and pow with a float result;
//  * torch.tensor(number) (aten::tensor.int / .float / .bool): an out-variant kernel, so
//    the 0-dim result is a planned output filled each run instead of a new tensor;
//  * aten::copy_ (Swin's `mask[h, w] = cnt` writes into a slice of the mask);
//  * aten::remainder.Scalar (torchvision's detection postprocessing `idx % classes`).
#include <ATen/CPUFunctions.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/fill_native.h>

#include <cmath>
#include <stdexcept>

#include "ops_cpu/native/common.h"
#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/out_variant/operand.h"

namespace brisk::ops_cpu::native {
namespace {

template <typename T>
T num(const c10::IValue& v);
template <>
int64_t num<int64_t>(const c10::IValue& v) {
  return v.toInt();
}
template <>
double num<double>(const c10::IValue& v) {
  return v.toDouble();
}

template <typename A, typename B, typename F>
void binary(PluginRegistrar& r, const char* key, F f) {
  r.native(key, [f, key](KernelBuildContext&) {
    return lambda([f](KernelContext& ctx) { ctx.output(0) = f(num<A>(ctx.input(0)), num<B>(ctx.input(1))); }, key);
  });
}

// The interpreter's remainder: (b + a % b) % b, so the result takes b's sign as in
// Python; fmod for floats. An int remainder by 0 raises instead of trapping.
int64_t remainderInt(int64_t a, int64_t b) {
  if (b == 0) throw std::runtime_error("ZeroDivisionError: integer division or modulo by zero");
  return (b + a % b) % b;
}
double remainderFloat(double a, double b) { return std::fmod(b + std::fmod(a, b), b); }

void registerNumberOps(PluginRegistrar& r) {
  binary<int64_t, int64_t>(r, "aten::remainder.int", remainderInt);
  binary<double, double>(r, "aten::remainder.float", remainderFloat);
  binary<int64_t, double>(r, "aten::remainder.int_float",
                          [](int64_t a, double b) { return remainderFloat(static_cast<double>(a), b); });
  binary<double, int64_t>(r, "aten::remainder.float_int",
                          [](double a, int64_t b) { return remainderFloat(a, static_cast<double>(b)); });
  // pow with a float exponent or base returns a float (NaN for a negative base and a
  // fractional exponent, as std::pow and the interpreter give).
  binary<int64_t, double>(r, "aten::pow.int_float",
                          [](int64_t a, double b) { return std::pow(static_cast<double>(a), b); });
  binary<double, double>(r, "aten::pow.float", [](double a, double b) { return std::pow(a, b); });
  binary<double, int64_t>(r, "aten::pow.float_int",
                          [](double a, int64_t b) { return std::pow(a, static_cast<double>(b)); });
}

// torch.tensor(number, dtype=None, device=None, requires_grad=False). The interpreter
// makes a 0-dim tensor of the number's natural dtype (int64; the default float dtype;
// bool) and casts it to `dtype`; filling a `dtype` tensor with the number as it is in
// the natural dtype gives the same value. Declines a device other than the CPU and
// requires_grad (the runtime runs without autograd).
enum class Number { kInt, kFloat, kBool };

std::unique_ptr<Kernel> tensorFromNumber(KernelBuildContext& b, Number kind) {
  if (out::numInputs(b) != 4) return nullptr;
  const c10::ScalarType natural =
      kind == Number::kInt ? at::kLong : kind == Number::kBool ? at::kBool : out::defaultFloat();
  c10::ScalarType dt = natural;
  if (!out::isConstNone(b, 1)) {
    auto d = out::constInt(b, 1);
    if (!d) return nullptr;
    dt = static_cast<c10::ScalarType>(*d);
  }
  if (!out::isConstNone(b, 2)) {
    if (!out::isConst(b, 2) || !out::constant(b, 2).isDevice() || !out::constant(b, 2).toDevice().is_cpu())
      return nullptr;
  }
  if (out::constBool(b, 3) != std::optional<bool>(false)) return nullptr;
  return out::makeKernel("0-dim fill (torch.tensor)", [kind, natural, dt](KernelContext& ctx) {
    const c10::IValue& v = ctx.input(0);
    c10::Scalar value;
    if (kind == Number::kInt) {
      value = v.toInt();
    } else if (kind == Number::kBool) {
      value = v.toBool();
    } else {
      // Rounded to the natural dtype first, as the interpreter's intermediate tensor is.
      value = natural == at::kFloat ? static_cast<double>(static_cast<float>(v.toDouble())) : v.toDouble();
    }
    at::Tensor& o = out::sizedOut(ctx, {}, at::TensorOptions().dtype(dt));
    at::native::fill_(o, value);
  });
}

// copy_(self, src, non_blocking): writes into `self` and returns it (the in-place
// contract; ops_cpu/out_variant/inplace.cc explains why such nodes reach a kernel).
std::unique_ptr<Kernel> copyInPlace(KernelBuildContext& b) {
  if (out::numInputs(b) != 3) return nullptr;
  return out::makeKernel(
      "at::native::copy_ (in place)",
      [](KernelContext& ctx) {
        at::Tensor self = ctx.tensor(0);
        const at::Tensor& src = ctx.tensor(1);
        const bool non_blocking = ctx.input(2).toBool();
        if (out::isDenseCpu(self) && out::isDenseCpu(src))
          at::native::copy_(self, src, non_blocking);
        else
          self.copy_(src, non_blocking);
        ctx.output(0) = ctx.input(0);
      },
      KernelKind::kNative);
}

// remainder(self, Scalar): ATen's Scalar overload wraps the number and runs the Tensor
// one (same promotion); the result goes into the planned output.
std::unique_ptr<Kernel> remainderScalar(KernelBuildContext& b) {
  if (out::numInputs(b) != 2) return nullptr;
  out::Operand other = out::scalarOperand(b, 1);
  return out::makeKernel("at::cpu::remainder_out(Scalar)", [other = std::move(other)](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    c10::MaybeOwned<at::Tensor> y = other.get(ctx);
    if (!out::isDenseCpu(x)) {
      ctx.output(0) = at::remainder(x, *y);
      return;
    }
    out::writeOut(
        ctx, at::native::result_type(x, *y), [&](at::Tensor& o) { at::cpu::remainder_out(o, x, *y); },
        [&] { return at::cpu::remainder(x, *y); });
  });
}

}  // namespace

void registerScalarMoreKernels(PluginRegistrar& r) {
  registerNumberOps(r);
  r.outVariant("aten::tensor.int", [](KernelBuildContext& b) { return tensorFromNumber(b, Number::kInt); });
  r.outVariant("aten::tensor.float", [](KernelBuildContext& b) { return tensorFromNumber(b, Number::kFloat); });
  r.outVariant("aten::tensor.bool", [](KernelBuildContext& b) { return tensorFromNumber(b, Number::kBool); });
  r.native("aten::copy_", copyInPlace);
  r.outVariant("aten::remainder.Scalar", remainderScalar);
}

}  // namespace brisk::ops_cpu::native
