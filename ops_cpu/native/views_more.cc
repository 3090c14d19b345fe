// More views: diagonal, narrow, swapaxes and alias (torch.export's core IR spells
// detach() as alias). Like views.cc: the result shares its input's bytes with ATen's
// sizes, strides and offset, made by the at::native:: CPU kernel for plain CPU tensors
// and by the Tensor method otherwise, below the autograd keys (see views.cc).
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/ops/alias.h>
#include <ATen/ops/alias_native.h>
#include <ATen/ops/diagonal_native.h>
#include <ATen/ops/narrow_native.h>
#include <ATen/ops/swapaxes_native.h>

#include "ops_cpu/native/common.h"

namespace brisk::ops_cpu::native {
namespace {

template <typename F>
void regView(PluginRegistrar& r, const char* key, const char* what, F f) {
  r.native(key, [f, what](KernelBuildContext&) {
    return lambda(
        [f](KernelContext& ctx) {
          at::AutoDispatchBelowADInplaceOrView below_autograd;
          const at::Tensor& t = ctx.tensor(0);
          ctx.output(0) = f(ctx, t, plainCpu(t));
        },
        what);
  });
}

}  // namespace

void registerMoreViewKernels(PluginRegistrar& r) {
  // diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1)
  regView(r, "aten::diagonal", "at::native::diagonal", [](KernelContext& ctx, const at::Tensor& t, bool plain) {
    const int64_t offset = ctx.input(1).toInt(), d1 = ctx.input(2).toInt(), d2 = ctx.input(3).toInt();
    return plain ? at::native::diagonal(t, offset, d1, d2) : t.diagonal(offset, d1, d2);
  });
  // narrow(Tensor(a) self, int dim, SymInt start, SymInt length)
  regView(r, "aten::narrow", "at::native::narrow", [](KernelContext& ctx, const at::Tensor& t, bool plain) {
    const int64_t dim = ctx.input(1).toInt(), start = ctx.input(2).toInt(), length = ctx.input(3).toInt();
    return plain ? at::native::narrow_symint(t, dim, c10::SymInt(start), c10::SymInt(length))
                 : t.narrow(dim, start, length);
  });
  // swapaxes(Tensor(a) self, int axis0, int axis1)
  regView(r, "aten::swapaxes", "at::native::swapaxes", [](KernelContext& ctx, const at::Tensor& t, bool plain) {
    const int64_t a0 = ctx.input(1).toInt(), a1 = ctx.input(2).toInt();
    return plain ? at::native::swapaxes(t, a0, a1) : t.swapaxes(a0, a1);
  });
  // alias(Tensor(a) self): a new tensor on the same bytes.
  regView(r, "aten::alias", "at::native::alias", [](KernelContext&, const at::Tensor& t, bool plain) {
    return plain ? at::native::alias(t) : at::alias(t);
  });
}

}  // namespace brisk::ops_cpu::native
