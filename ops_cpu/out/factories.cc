// Tensor factories: arange (all three overloads), full.
#include <ATen/ATen.h>
#include <ATen/ops/arange_native.h>
#include <ATen/ops/fill_native.h>

#include "ops_cpu/out/common.h"

namespace brisk::ops_cpu::out {
namespace {

// arange(end, ...) / arange.start(start, end, ...) / arange.start_step(start, end,
// step, ...), each followed by dtype, layout, device, pin_memory (all optional). The
// bounds and options may be run-time values (e.g. a tensor's numel, dtype and device).
// As ATen's functional arange: without a dtype the result is int64 when every bound is
// integral, else the default float dtype; at::native::arange_out then sizes and fills
// the (retained) output. Non-CPU devices, non-strided layouts and pinned memory take
// the dispatcher's op.
std::unique_ptr<Kernel> arange(KernelBuildContext& b) {
  const size_t n = numInputs(b);
  if (n < 5 || n > 7) return nullptr;
  const size_t bounds = n - 4;  // 1, 2 or 3 Scalars, then the 4 options
  const ScalarArg first = scalarArg(b, 0);
  const ScalarArg second = bounds >= 2 ? scalarArg(b, 1) : ScalarArg{};
  const ScalarArg third = bounds == 3 ? scalarArg(b, 2) : ScalarArg{};
  const size_t opt = bounds;
  return makeKernel("at::native::arange_out", [bounds, first, second, third, opt](KernelContext& ctx) {
    const c10::Scalar start = bounds == 1 ? c10::Scalar(int64_t{0}) : first.get(ctx);
    const c10::Scalar end = bounds == 1 ? first.get(ctx) : second.get(ctx);
    const c10::Scalar step = bounds == 3 ? third.get(ctx) : c10::Scalar(int64_t{1});
    const c10::IValue& dtype = ctx.input(opt);
    const c10::IValue& layout = ctx.input(opt + 1);
    const c10::IValue& device = ctx.input(opt + 2);
    const c10::IValue& pin = ctx.input(opt + 3);
    const bool plain = (layout.isNone() || layout.toLayout() == c10::kStrided) &&
                       (device.isNone() || device.toDevice().is_cpu()) && (pin.isNone() || !pin.toBool());
    auto functional = [&] {
      return at::arange(start, end, step, dtype.toOptional<c10::ScalarType>(), layout.toOptional<c10::Layout>(),
                        device.toOptional<c10::Device>(), pin.toOptional<bool>());
    };
    if (!plain) {
      ctx.output(0) = functional();
      return;
    }
    c10::ScalarType dt;
    if (!dtype.isNone())
      dt = dtype.toScalarType();
    else if (start.isIntegral(true) && end.isIntegral(true) && step.isIntegral(true))
      dt = at::kLong;
    else
      dt = defaultFloat();
    writeOut(ctx, dt, [&](at::Tensor& o) { at::native::arange_out(start, end, step, o); }, functional);
  });
}

// full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype, Layout? layout,
// Device? device, bool? pin_memory). As ATen's functional op: without a dtype the
// result's dtype follows the fill value (bool, int64, complex or the default float).
// Sizes and options may be run-time values; non-CPU devices, non-strided layouts and
// pinned memory take the dispatcher's op.
std::unique_ptr<Kernel> full(KernelBuildContext& b) {
  if (numInputs(b) != 6) return nullptr;
  const ScalarArg fill = scalarArg(b, 1);
  return makeKernel("at::native::fill_", [fill](KernelContext& ctx) {
    const at::DimVector size = ctx.input(0).toDimVector();
    const c10::Scalar value = fill.get(ctx);
    const c10::IValue& dtype = ctx.input(2);
    const c10::IValue& layout = ctx.input(3);
    const c10::IValue& device = ctx.input(4);
    const c10::IValue& pin = ctx.input(5);
    const bool plain = (layout.isNone() || layout.toLayout() == c10::kStrided) &&
                       (device.isNone() || device.toDevice().is_cpu()) && (pin.isNone() || !pin.toBool());
    if (!plain) {
      ctx.output(0) = at::full(size, value, dtype.toOptional<c10::ScalarType>(), layout.toOptional<c10::Layout>(),
                               device.toOptional<c10::Device>(), pin.toOptional<bool>());
      return;
    }
    c10::ScalarType dt;
    if (!dtype.isNone())
      dt = dtype.toScalarType();
    else if (value.isBoolean())
      dt = at::kBool;
    else if (value.isIntegral(false))
      dt = at::kLong;
    else if (value.isComplex())
      dt = c10::toComplexType(defaultFloat());
    else
      dt = defaultFloat();
    at::Tensor& o = sizedOut(ctx, size, at::TensorOptions().dtype(dt));
    at::native::fill_(o, value);
  });
}

}  // namespace

void registerFactories(PluginRegistrar& r) {
  r.outVariant("aten::full", full);
  r.outVariant("aten::arange", arange);
  r.outVariant("aten::arange.start", arange);
  r.outVariant("aten::arange.start_step", arange);
}

}  // namespace brisk::ops_cpu::out
