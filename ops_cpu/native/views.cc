// View and view-or-copy ops. Plain CPU tensors call the at::native:: CPU kernels
// directly (no dispatcher); anything else takes the Tensor method. Outputs alias their
// input exactly as the interpreter's do (a view shares its input's bytes; reshape/flatten/contiguous
// /to copy only when the interpreter's op would).
#include <ATen/InferSize.h>
#include <ATen/TensorUtils.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/chunk_native.h>
#include <ATen/ops/contiguous_native.h>
#include <ATen/ops/expand_as_native.h>
#include <ATen/ops/expand_native.h>
#include <ATen/ops/flatten_native.h>
#include <ATen/ops/permute_native.h>
#include <ATen/ops/reshape_native.h>
#include <ATen/ops/select_native.h>
#include <ATen/ops/slice_native.h>
#include <ATen/ops/split_native.h>
#include <ATen/ops/split_with_sizes_native.h>
#include <ATen/ops/squeeze_native.h>
#include <ATen/ops/t_native.h>
#include <ATen/ops/to_native.h>
#include <ATen/ops/transpose_native.h>
#include <ATen/ops/unbind_native.h>
#include <ATen/ops/unflatten_native.h>
#include <ATen/ops/unsqueeze_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/SymIntArrayRef.h>

#include "ops_cpu/native/common.h"

namespace brisk::ops_cpu::native {
namespace {

// Every kernel here runs below the autograd and ADInplaceOrView dispatch keys. The
// runtime runs without grad, so the view tracking those keys add (a DifferentiableViewMeta
// per view: more allocations and a shared version counter, for autograd only) costs more
// than the view itself: deepandwide's 16 selects per run took 11 us with it, 4 without.
// The result aliases the same bytes with the same sizes, strides and offset; it is just
// not marked as a view of its input (is_view() is false), which only autograd reads.
template <typename F>
std::unique_ptr<Kernel> viewKernel(F f, std::string what) {
  return lambda(
      [f = std::move(f)](KernelContext& ctx) {
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        f(ctx);
      },
      std::move(what));
}

at::Tensor reshapeFast(const at::Tensor& t, c10::IntArrayRef proposed) {
  at::DimVector shape = at::infer_size_dv(proposed, t.numel());
  auto stride = at::detail::computeStride(t.sizes(), t.strides(), shape);
  if (stride) return at::native::_reshape_alias(t, shape, *stride);
  // Not viewable: the interpreter's reshape copies (clone + _unsafe_view).
  return at::native::reshape_symint(t, c10::fromIntArrayRefSlow(proposed));
}

// A view op of (self, int[] list): `op(self, list)`, the list read per call (it may be
// built at run time from sizes) into a stack buffer.
template <typename Op>
std::unique_ptr<Kernel> intListView(KernelBuildContext& b, Op op, const char* what) {
  IntListArg list(b.node(), 1);
  return viewKernel(
      [list, op](KernelContext& ctx) {
        IntVec buf;
        ctx.output(0) = op(ctx.tensor(0), list.get(ctx, buf));
      },
      what);
}

std::unique_ptr<Kernel> makeView(KernelBuildContext& b) {
  return intListView(
      b, [](const at::Tensor& t, c10::IntArrayRef s) { return plainCpu(t) ? at::native::view(t, s) : t.view(s); },
      "at::native::view");
}

std::unique_ptr<Kernel> makeReshape(KernelBuildContext& b) {
  return intListView(
      b, [](const at::Tensor& t, c10::IntArrayRef s) { return plainCpu(t) ? reshapeFast(t, s) : t.reshape(s); },
      "at::native::_reshape_alias (copy when not viewable)");
}

std::unique_ptr<Kernel> makeFlatten(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const int64_t s = ctx.input(1).toInt(), e = ctx.input(2).toInt();
        ctx.output(0) = plainCpu(t) ? at::native::flatten(t, s, e) : t.flatten(s, e);
      },
      "at::native::flatten");
}

std::unique_ptr<Kernel> makePermute(KernelBuildContext& b) {
  return intListView(
      b, [](const at::Tensor& t, c10::IntArrayRef d) { return plainCpu(t) ? at::native::permute(t, d) : t.permute(d); },
      "at::native::permute");
}

std::unique_ptr<Kernel> makeTranspose(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const int64_t d0 = ctx.input(1).toInt(), d1 = ctx.input(2).toInt();
        ctx.output(0) = plainCpu(t) ? at::native::transpose(t, d0, d1) : t.transpose(d0, d1);
      },
      "at::native::transpose");
}

std::unique_ptr<Kernel> makeT(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        ctx.output(0) = plainCpu(t) ? at::native::t(t) : t.t();
      },
      "at::native::t");
}

std::unique_ptr<Kernel> makeContiguous(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const at::MemoryFormat mf = ctx.input(1).toMemoryFormat();
        ctx.output(0) = plainCpu(t) ? at::native::contiguous(t, mf) : t.contiguous(mf);
      },
      "at::native::contiguous (self when already contiguous)");
}

std::unique_ptr<Kernel> makeSelect(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const int64_t dim = ctx.input(1).toInt(), index = ctx.input(2).toInt();
        ctx.output(0) = plainCpu(t) ? at::native::select_symint(t, dim, c10::SymInt(index)) : t.select(dim, index);
      },
      "at::native::select");
}

std::unique_ptr<Kernel> makeSlice(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const int64_t dim = ctx.input(1).toInt();
        const std::optional<int64_t> start = optInt(ctx.input(2)), end = optInt(ctx.input(3));
        const int64_t step = ctx.input(4).toInt();
        c10::optional<int64_t> s, e;
        if (start) s = *start;
        if (end) e = *end;
        ctx.output(0) = plainCpu(t) ? at::native::slice(t, dim, s, e, step) : t.slice(dim, s, e, step);
      },
      "at::native::slice");
}

std::unique_ptr<Kernel> makeSqueeze(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        ctx.output(0) = plainCpu(t) ? at::native::squeeze(t) : t.squeeze();
      },
      "at::native::squeeze");
}

std::unique_ptr<Kernel> makeSqueezeDim(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const int64_t dim = ctx.input(1).toInt();
        ctx.output(0) = plainCpu(t) ? at::native::squeeze(t, dim) : t.squeeze(dim);
      },
      "at::native::squeeze.dim");
}

// squeeze.dims(Tensor(a) self, int[] dim) (core ATen IR).
std::unique_ptr<Kernel> makeSqueezeDims(KernelBuildContext& b) {
  return intListView(
      b, [](const at::Tensor& t, c10::IntArrayRef d) { return plainCpu(t) ? at::native::squeeze(t, d) : t.squeeze(d); },
      "at::native::squeeze.dims");
}

std::unique_ptr<Kernel> makeUnsqueeze(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const int64_t dim = ctx.input(1).toInt();
        ctx.output(0) = plainCpu(t) ? at::native::unsqueeze(t, dim) : t.unsqueeze(dim);
      },
      "at::native::unsqueeze");
}

std::unique_ptr<Kernel> makeExpand(KernelBuildContext& b) {
  IntListArg size(b.node(), 1);
  return viewKernel(
      [size](KernelContext& ctx) {
        IntVec buf;
        c10::IntArrayRef s = size.get(ctx, buf);
        const at::Tensor& t = ctx.tensor(0);
        const bool implicit = ctx.input(2).toBool();
        ctx.output(0) = plainCpu(t) ? at::native::expand(t, s, implicit) : t.expand(s, implicit);
      },
      "at::native::expand");
}

std::unique_ptr<Kernel> makeExpandAs(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const at::Tensor& other = ctx.tensor(1);
        ctx.output(0) = plainCpu(t) ? at::native::expand_as(t, other) : t.expand_as(other);
      },
      "at::native::expand_as");
}

std::unique_ptr<Kernel> makeChunk(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const int64_t chunks = ctx.input(1).toInt(), dim = ctx.input(2).toInt();
        ctx.output(0) = plainCpu(t) ? at::native::chunk(t, chunks, dim) : t.chunk(chunks, dim);
      },
      "at::native::chunk");
}

std::unique_ptr<Kernel> makeSplitInt(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const int64_t size = ctx.input(1).toInt(), dim = ctx.input(2).toInt();
        ctx.output(0) = plainCpu(t) ? at::native::split(t, size, dim) : t.split(size, dim);
      },
      "at::native::split");
}

std::unique_ptr<Kernel> makeSplitSizes(KernelBuildContext& b) {
  IntListArg sizes(b.node(), 1);
  return viewKernel(
      [sizes](KernelContext& ctx) {
        IntVec buf;
        c10::IntArrayRef s = sizes.get(ctx, buf);
        const at::Tensor& t = ctx.tensor(0);
        const int64_t dim = ctx.input(2).toInt();
        ctx.output(0) = plainCpu(t) ? at::native::split_with_sizes(t, s, dim) : t.split(s, dim);
      },
      "at::native::split (sizes)");
}

// unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) (attention's head split).
std::unique_ptr<Kernel> makeUnflatten(KernelBuildContext& b) {
  IntListArg sizes(b.node(), 2);
  return viewKernel(
      [sizes](KernelContext& ctx) {
        IntVec buf;
        c10::IntArrayRef s = sizes.get(ctx, buf);
        const at::Tensor& t = ctx.tensor(0);
        const int64_t dim = ctx.input(1).toInt();
        ctx.output(0) = plainCpu(t) ? at::native::unflatten_symint(t, dim, c10::fromIntArrayRefSlow(s))
                                    : t.unflatten(dim, s);
      },
      "at::native::unflatten");
}

std::unique_ptr<Kernel> makeUnbind(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const int64_t dim = ctx.input(1).toInt();
        ctx.output(0) = plainCpu(t) ? at::native::unbind(t, dim) : t.unbind(dim);
      },
      "at::native::unbind");
}

// aten::to.dtype: returns self when nothing changes and copy=False, else a converted
// copy (at::native::to decides exactly as the interpreter's op does).
std::unique_ptr<Kernel> makeToDtype(KernelBuildContext&) {
  return viewKernel(
      [](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        const at::ScalarType dtype = ctx.input(1).toScalarType();
        const bool non_blocking = ctx.input(2).toBool(), copy = ctx.input(3).toBool();
        const c10::IValue& mfv = ctx.input(4);
        c10::optional<at::MemoryFormat> mf;
        if (!mfv.isNone()) mf = mfv.toMemoryFormat();
        ctx.output(0) = plainCpu(t) ? at::native::to(t, dtype, non_blocking, copy, mf)
                                    : t.to(dtype, non_blocking, copy, mf);
      },
      "at::native::to (dtype)");
}

}  // namespace

void registerViewKernels(PluginRegistrar& r) {
  r.native("aten::view", makeView);
  r.native("aten::reshape", makeReshape);
  r.native("aten::flatten.using_ints", makeFlatten);
  r.native("aten::permute", makePermute);
  r.native("aten::transpose.int", makeTranspose);
  r.native("aten::t", makeT);
  r.native("aten::contiguous", makeContiguous);
  r.native("aten::select.int", makeSelect);
  r.native("aten::slice.Tensor", makeSlice);
  r.native("aten::squeeze", makeSqueeze);
  r.native("aten::squeeze.dim", makeSqueezeDim);
  r.native("aten::squeeze.dims", makeSqueezeDims);
  r.native("aten::unsqueeze", makeUnsqueeze);
  r.native("aten::expand", makeExpand);
  r.native("aten::expand_as", makeExpandAs);
  r.native("aten::chunk", makeChunk);
  r.native("aten::split.Tensor", makeSplitInt);
  r.native("aten::split.sizes", makeSplitSizes);
  r.native("aten::split", makeSplitSizes);
  // split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]
  // (core ATen IR's split / chunk / LSTM gate split): split.sizes' arguments.
  r.native("aten::split_with_sizes", makeSplitSizes);
  r.native("aten::unbind.int", makeUnbind);
  r.native("aten::unflatten.int", makeUnflatten);
  r.native("aten::to.dtype", makeToDtype);
}

}  // namespace brisk::ops_cpu::native
