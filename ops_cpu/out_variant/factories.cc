// Tensor factories: arange (all three overloads), full, zeros, ones, and zeros_like /
// ones_like / full_like.
#include <ATen/ATen.h>
#include <ATen/ops/arange_native.h>
#include <ATen/ops/fill_native.h>
#include <ATen/ops/zero_native.h>

#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {
namespace {

// The trailing dtype, layout, device, pin_memory arguments shared by the factories.
// `plain()` is true when they ask for an ordinary strided CPU tensor: only then does a
// kernel size and fill the output itself; anything else takes the dispatcher's op.
struct FactoryOptions {
  size_t first;  // index of dtype
  const c10::IValue& dtype(const KernelContext& ctx) const { return ctx.input(first); }
  const c10::IValue& layout(const KernelContext& ctx) const { return ctx.input(first + 1); }
  const c10::IValue& device(const KernelContext& ctx) const { return ctx.input(first + 2); }
  const c10::IValue& pin(const KernelContext& ctx) const { return ctx.input(first + 3); }
  bool plain(const KernelContext& ctx) const {
    const c10::IValue &l = layout(ctx), &d = device(ctx), &p = pin(ctx);
    return (l.isNone() || l.toLayout() == c10::kStrided) && (d.isNone() || d.toDevice().is_cpu()) &&
           (p.isNone() || !p.toBool());
  }
};

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

// zeros / ones(SymInt[] size, *, dtype, layout, device, pin_memory): as ATen's, the
// dtype defaults to the default float dtype whatever the fill value. The (retained,
// plannable) output is resized and filled in place on every run.
KernelFactory constantFill(double value, const char* name) {
  return [value, name](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    if (numInputs(b) != 5) return nullptr;
    const c10::Scalar fill(value);
    const FactoryOptions opt{1};
    return makeKernel(std::string("at::native::fill_ (") + name + ")", [fill, opt, value](KernelContext& ctx) {
      const at::DimVector size = ctx.input(0).toDimVector();
      const c10::IValue& dtype = opt.dtype(ctx);
      if (!opt.plain(ctx)) {
        ctx.output(0) =
            at::full(size, fill, dtype.toOptional<c10::ScalarType>(), opt.layout(ctx).toOptional<c10::Layout>(),
                     opt.device(ctx).toOptional<c10::Device>(), opt.pin(ctx).toOptional<bool>());
        return;
      }
      const c10::ScalarType dt = dtype.isNone() ? defaultFloat() : dtype.toScalarType();
      at::Tensor& o = sizedOut(ctx, size, at::TensorOptions().dtype(dt));
      if (value == 0.0)
        at::native::zero_(o);
      else
        at::native::fill_(o, fill);
    });
  };
}

// zeros_like / ones_like(self, *, dtype, layout, device, pin_memory, memory_format) and
// full_like(self, fill_value, *, ...). The result has self's sizes and, without a dtype,
// self's dtype. Its strides follow memory_format (preserve by default: self's own
// strides when self is dense); the kernel writes into its output only when they are
// plain contiguous ones (contiguous format, or preserve with a contiguous self), which
// covers what models do (zeros_like of an activation); other layouts get the
// dispatcher's op, which computes the strides exactly as the interpreter does.
KernelFactory fillLike(std::optional<double> value, const char* name) {
  return [value, name](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    const size_t first = value ? 1 : 2;  // index of dtype
    if (numInputs(b) != first + 5) return nullptr;
    const ScalarArg fill = value ? ScalarArg{true, c10::Scalar(*value), 0} : scalarArg(b, 1);
    const FactoryOptions opt{first};
    const size_t format_index = first + 4;
    return makeKernel(std::string("at::native::fill_ (") + name + ")", [fill, opt, format_index](KernelContext& ctx) {
      const at::Tensor& self = ctx.tensor(0);
      const c10::Scalar v = fill.get(ctx);
      const c10::IValue& dtype = opt.dtype(ctx);
      const c10::IValue& format = ctx.input(format_index);
      const auto mf = format.toOptional<c10::MemoryFormat>();
      const bool contiguous_result = (!mf || *mf == c10::MemoryFormat::Preserve) ? self.is_contiguous()
                                                                                 : *mf == c10::MemoryFormat::Contiguous;
      if (!opt.plain(ctx) || !isDenseCpu(self) || !contiguous_result) {
        ctx.output(0) = at::full_like(self, v, dtype.toOptional<c10::ScalarType>(),
                                      opt.layout(ctx).toOptional<c10::Layout>(),
                                      opt.device(ctx).toOptional<c10::Device>(), opt.pin(ctx).toOptional<bool>(), mf);
        return;
      }
      const c10::ScalarType dt = dtype.isNone() ? self.scalar_type() : dtype.toScalarType();
      at::Tensor& o = sizedOut(ctx, self.sizes(), at::TensorOptions().dtype(dt));
      at::native::fill_(o, v);
    });
  };
}

}  // namespace

void registerFactories(PluginRegistrar& r) {
  r.outVariant("aten::zeros", constantFill(0.0, "zeros"));
  r.outVariant("aten::ones", constantFill(1.0, "ones"));
  r.outVariant("aten::zeros_like", fillLike(0.0, "zeros_like"));
  r.outVariant("aten::ones_like", fillLike(1.0, "ones_like"));
  r.outVariant("aten::full_like", fillLike(std::nullopt, "full_like"));
  r.outVariant("aten::full", full);
  r.outVariant("aten::arange", arange);
  r.outVariant("aten::arange.start", arange);
  r.outVariant("aten::arange.start_step", arange);
}

}  // namespace brisk::ops_cpu::out
