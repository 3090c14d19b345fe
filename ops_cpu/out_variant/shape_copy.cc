// Copies and concatenation: cat, stack, clone, zeros_like.
//
// Not here on purpose: flatten / reshape / contiguous / to.* — their schemas say the
// result may alias the input (Tensor(a)), so the runtime never retains them and a copy
// would change semantics; the native kernels (ops_cpu/native) serve them.
#include <ATen/CPUFunctions.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/stack_native.h>
#include <ATen/ops/zero_native.h>

#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {
namespace {

c10::ScalarType promotedDtype(const c10::List<at::Tensor>& list) {
  c10::ScalarType t = c10::ScalarType::Undefined;
  bool first = true;
  for (const at::Tensor& x : list) {
    t = first ? x.scalar_type() : c10::promoteTypes(t, x.scalar_type());
    first = false;
  }
  return t;
}

bool allDenseCpu(const c10::List<at::Tensor>& list) {
  for (const at::Tensor& x : list)
    if (!isDenseCpu(x)) return false;
  return true;
}

std::unique_ptr<Kernel> cat(KernelBuildContext& b) {
  if (numInputs(b) != 2) return nullptr;
  auto dim = constInt(b, 1);
  if (!dim) return nullptr;
  const int64_t d = *dim;
  return makeKernel("at::cpu::cat_out", [d](KernelContext& ctx) {
    const c10::List<at::Tensor> list = ctx.input(0).toTensorList();
    if (list.empty() || !allDenseCpu(list)) {
      ctx.output(0) = at::cat(list.vec(), d);
      return;
    }
    const at::ITensorListRef ref(list);
    writeOut(
        ctx, promotedDtype(list), [&](at::Tensor& o) { at::cpu::cat_out(o, ref, d); },
        [&] { return at::cpu::cat(ref, d); });
  });
}

std::unique_ptr<Kernel> stack(KernelBuildContext& b) {
  if (numInputs(b) != 2) return nullptr;
  auto dim = constInt(b, 1);
  if (!dim) return nullptr;
  const int64_t d = *dim;
  return makeKernel("at::native::stack_out", [d](KernelContext& ctx) {
    const c10::List<at::Tensor> list = ctx.input(0).toTensorList();
    std::vector<at::Tensor> v = list.vec();
    if (v.empty() || !allDenseCpu(list)) {
      ctx.output(0) = at::stack(v, d);
      return;
    }
    writeOut(
        ctx, promotedDtype(list), [&](at::Tensor& o) { at::native::stack_out(v, d, o); },
        [&] { return at::stack(v, d); });
  });
}

// A retained output with exactly `x`'s geometry and dtype (what a preserve-format
// clone / *_like of a dense `x` allocates), or null.
at::Tensor* sameGeometryOut(KernelContext& ctx, const at::Tensor& x, c10::ScalarType dtype) {
  c10::IValue& o = ctx.output(0);
  if (!o.isTensor()) return nullptr;
  at::Tensor& t = o.toTensor();
  if (t.scalar_type() != dtype || !isDenseCpu(t) || !t.sizes().equals(x.sizes()) ||
      !t.strides().equals(x.strides()) || !x.is_non_overlapping_and_dense())
    return nullptr;
  return &t;
}

std::unique_ptr<Kernel> clone(KernelBuildContext& b) {
  if (numInputs(b) != 2 || !isConst(b, 1)) return nullptr;
  const c10::IValue& mf = constant(b, 1);
  c10::optional<at::MemoryFormat> fmt;
  if (mf.isInt())
    fmt = static_cast<at::MemoryFormat>(mf.toInt());
  else if (!mf.isNone())
    return nullptr;
  if (fmt && *fmt != at::MemoryFormat::Preserve && *fmt != at::MemoryFormat::Contiguous) return nullptr;
  const bool contiguous = fmt && *fmt == at::MemoryFormat::Contiguous;
  return makeKernel(contiguous ? "at::native::copy_ (contiguous)" : "at::native::copy_", [fmt, contiguous](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x)) {
      ctx.output(0) = at::clone(x, fmt);
      return;
    }
    if (contiguous) {
      if (at::Tensor* o = reusableOut(ctx, 0, x.scalar_type())) {
        at::native::resize_(*o, x.sizes(), c10::nullopt);
        at::native::copy_(*o, x, false);
      } else {
        ctx.output(0) = at::native::clone(x, fmt);
      }
      return;
    }
    if (at::Tensor* o = sameGeometryOut(ctx, x, x.scalar_type())) {
      at::native::copy_(*o, x, false);
    } else {
      ctx.output(0) = at::native::clone(x, fmt);
    }
  });
}

// zeros_like(Tensor self, *, ScalarType? dtype, Layout? layout, Device? device,
//            bool? pin_memory, MemoryFormat? memory_format): layout/device/pin/format
// None; dtype None or any value (read at run time).
std::unique_ptr<Kernel> zerosLike(KernelBuildContext& b) {
  if (numInputs(b) != 6) return nullptr;
  for (size_t i = 2; i < 6; ++i)
    if (!isConstNone(b, i)) return nullptr;
  return makeKernel("at::native::zero_", [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    const c10::IValue& dv = ctx.input(1);
    const c10::ScalarType dt = dv.isNone() ? x.scalar_type() : static_cast<c10::ScalarType>(dv.toInt());
    if (at::Tensor* o = isDenseCpu(x) ? sameGeometryOut(ctx, x, dt) : nullptr) {
      at::native::zero_(*o);
    } else {
      ctx.output(0) = at::zeros_like(x, x.options().dtype(dt));
    }
  });
}

// triu(Tensor self, int diagonal=0) (a causal mask's upper triangle).
std::unique_ptr<Kernel> triu(KernelBuildContext& b) {
  if (numInputs(b) != 2) return nullptr;
  return makeKernel("at::cpu::triu_out", [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    const int64_t diagonal = ctx.input(1).toInt();
    if (!isDenseCpu(x)) {
      ctx.output(0) = at::triu(x, diagonal);
      return;
    }
    writeOut(
        ctx, x.scalar_type(), [&](at::Tensor& o) { at::cpu::triu_out(o, x, diagonal); },
        [&] { return at::cpu::triu(x, diagonal); });
  });
}

}  // namespace

void registerShapeCopy(PluginRegistrar& r) {
  r.outVariant("aten::triu", triu);
  r.outVariant("aten::cat", cat);
  r.outVariant("aten::stack", stack);
  r.outVariant("aten::clone", clone);
  r.outVariant("aten::zeros_like", zerosLike);
}

}  // namespace brisk::ops_cpu::out
