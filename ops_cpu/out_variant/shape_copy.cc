// Copies and concatenation: cat, stack, clone, _to_copy, flip, eval-mode dropout, zeros_like.
//
// Not here on purpose: flatten / reshape / contiguous / to.* — their schemas say the
// result may alias the input (Tensor(a)), so the runtime never retains them and a copy
// would change semantics; the native kernels (ops_cpu/native) serve them.
#include <ATen/CPUFunctions.h>
#include <ATen/WrapDimUtilsMulti.h>
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

// Copies the dense CPU `x` (converted to `dt`) into output 0: the retained output
// when it already has the layout ATen would allocate (x's sizes, contiguous when
// `contiguous`, else x's own strides), otherwise `fresh()`, ATen's own allocation and
// copy. Same values either way (copy_ converts as ATen's copy does).
template <class Fresh>
void copyOut(KernelContext& ctx, const at::Tensor& x, c10::ScalarType dt, bool contiguous, Fresh&& fresh) {
  at::Tensor* o = contiguous ? reusableOut(ctx, 0, dt) : sameGeometryOut(ctx, x, dt);
  if (!o) {
    ctx.output(0) = fresh();
    return;
  }
  if (contiguous) at::native::resize_(*o, x.sizes(), c10::nullopt);
  at::native::copy_(*o, x, false);
}

// Reads a constant MemoryFormat? argument into `fmt`; false unless it is None,
// Preserve or Contiguous (the formats copyOut serves).
bool copyFormat(KernelBuildContext& b, size_t i, c10::optional<at::MemoryFormat>& fmt) {
  if (!isConst(b, i)) return false;
  const c10::IValue& mf = constant(b, i);
  if (mf.isNone()) return true;
  if (!mf.isInt()) return false;
  fmt = static_cast<at::MemoryFormat>(mf.toInt());
  return *fmt == at::MemoryFormat::Preserve || *fmt == at::MemoryFormat::Contiguous;
}

std::unique_ptr<Kernel> clone(KernelBuildContext& b) {
  if (numInputs(b) != 2) return nullptr;
  c10::optional<at::MemoryFormat> fmt;
  if (!copyFormat(b, 1, fmt)) return nullptr;
  const bool contiguous = fmt && *fmt == at::MemoryFormat::Contiguous;
  return makeKernel(contiguous ? "at::native::copy_ (contiguous)" : "at::native::copy_", [fmt, contiguous](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x)) {
      ctx.output(0) = at::clone(x, fmt);
      return;
    }
    copyOut(ctx, x, x.scalar_type(), contiguous, [&] { return at::native::clone(x, fmt); });
  });
}

// _to_copy(Tensor self, *, ScalarType? dtype, Layout? layout, Device? device,
//          bool? pin_memory, bool non_blocking, MemoryFormat? memory_format)
// (core ATen IR's .to / .type / .float ...): a copy converted to `dtype`. Declines
// anything but a strided CPU result in preserve or contiguous format.
std::unique_ptr<Kernel> toCopy(KernelBuildContext& b) {
  if (numInputs(b) != 7) return nullptr;
  for (size_t i = 1; i < 7; ++i)
    if (!isConst(b, i)) return nullptr;
  const c10::IValue &dv = constant(b, 1), &lv = constant(b, 2), &devv = constant(b, 3), &pv = constant(b, 4);
  if (!dv.isNone() && !dv.isInt()) return nullptr;
  if (!lv.isNone() && !(lv.isInt() && static_cast<at::Layout>(lv.toInt()) == at::kStrided)) return nullptr;
  if (!devv.isNone() && !(devv.isDevice() && devv.toDevice().is_cpu())) return nullptr;
  if (!pv.isNone() && !(pv.isBool() && !pv.toBool())) return nullptr;
  c10::optional<at::MemoryFormat> fmt;
  if (!constBool(b, 5) || !copyFormat(b, 6, fmt)) return nullptr;
  const c10::optional<at::ScalarType> dtype =
      dv.isNone() ? c10::optional<at::ScalarType>() : static_cast<at::ScalarType>(dv.toInt());
  const bool contiguous = fmt && *fmt == at::MemoryFormat::Contiguous;
  return makeKernel("at::native::copy_ (converting)", [dtype, fmt, contiguous](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    auto fresh = [&] { return at::_to_copy(x, dtype, c10::nullopt, c10::nullopt, c10::nullopt, false, fmt); };
    if (!isDenseCpu(x)) {
      ctx.output(0) = fresh();
      return;
    }
    copyOut(ctx, x, dtype.value_or(x.scalar_type()), contiguous, fresh);
  });
}

// dropout(Tensor input, float p, bool train) with train=False (torch.export's default
// IR keeps eval-mode dropout). ATen returns `input` itself, but the schema does not
// mark the result as aliasing it. The in-place-reuse pass (core/graph/inplace_reuse.h)
// marks input 0 of such nodes reusable, so escape analysis and the memory planner know
// the alias: then the kernel returns the input as ATen does (contract kIntoInput, no copy).
// Without that mark (option inplace_reuse off) a planned input's bytes could be reused
// while the result is still read, so the kernel writes a copy into its own (planned)
// output instead: same values, sizes and (for dense inputs) strides. p outside [0, 1]
// and train=True are declined (the fallback raises ATen's error / draws the mask).
std::unique_ptr<Kernel> dropoutEval(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  auto p = constDouble(b, 1);
  auto train = constBool(b, 2);
  if (!p || !train || *train || !(*p >= 0 && *p <= 1)) return nullptr;
  if (reusableInput(b) == 0)
    return makeKernel(
        "eval dropout: the input itself (as ATen)", [](KernelContext& ctx) { ctx.output(0) = ctx.input(0); },
        OutputContract::kIntoInput);
  return makeKernel("at::native::copy_ (eval dropout: identity)", [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x)) {
      ctx.output(0) = x.clone();
      return;
    }
    copyOut(ctx, x, x.scalar_type(), /*contiguous=*/false, [&] { return at::native::clone(x, c10::nullopt); });
  });
}

// --- flip ----------------------------------------------------------------------------

// Copies `x` (dim >= 1, numel > 0) into the contiguous `out` with the dims in `flips`
// reversed: output elements in order, each read from x's strided position (a flipped
// dim is walked from its last index with a negated stride), so any strides work.
template <typename T>
void flipCopy(const at::Tensor& x, const std::bitset<at::dim_bitset_size>& flips, T* out) {
  const int64_t nd = x.dim();
  c10::SmallVector<int64_t, 8> step(nd), idx(nd, 0);
  const T* src = static_cast<const T*>(x.const_data_ptr());
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t st = x.stride(d);
    step[d] = flips[d] ? -st : st;
    if (flips[d]) src += (x.size(d) - 1) * st;
  }
  const int64_t inner = x.size(nd - 1), inner_step = step[nd - 1];
  const int64_t outer = x.numel() / inner;
  int64_t off = 0;
  for (int64_t o = 0; o < outer; ++o, out += inner) {
    const T* s = src + off;
    for (int64_t i = 0; i < inner; ++i) out[i] = s[i * inner_step];
    for (int64_t d = nd - 2; d >= 0; --d) {  // odometer over the outer dims
      off += step[d];
      if (++idx[d] < x.size(d)) break;
      off -= step[d] * x.size(d);
      idx[d] = 0;
    }
  }
}

// Elements moved as opaque words of their size (a flip never converts).
template <size_t kBytes>
struct Word {
  alignas(kBytes) unsigned char b[kBytes];
};

bool flipByElementSize(const at::Tensor& x, const std::bitset<at::dim_bitset_size>& flips, at::Tensor& o) {
  switch (x.element_size()) {
    case 1: flipCopy(x, flips, static_cast<Word<1>*>(o.data_ptr())); return true;
    case 2: flipCopy(x, flips, static_cast<Word<2>*>(o.data_ptr())); return true;
    case 4: flipCopy(x, flips, static_cast<Word<4>*>(o.data_ptr())); return true;
    case 8: flipCopy(x, flips, static_cast<Word<8>*>(o.data_ptr())); return true;
    case 16: flipCopy(x, flips, static_cast<Word<16>*>(o.data_ptr())); return true;
    default: return false;
  }
}

// flip(Tensor self, int[] dims) (core ATen IR's reversed sequences). ATen's result is
// empty_like(self) (memory format preserved) filled by a TensorIterator copy; this
// writes the same elements into the retained output. It is contiguous, so inputs for
// which ATen's result would not be (dense but permuted strides) take ATen's op, as do
// 0-d and empty inputs. Bad dims raise ATen's own error (dim_list_to_bitset).
std::unique_ptr<Kernel> flip(KernelBuildContext& b) {
  if (numInputs(b) != 2) return nullptr;
  auto dims = constInts(b, 1);
  if (!dims) return nullptr;
  return makeKernel("brisk strided flip copy", [dims = *dims](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x) || x.dim() == 0 || x.numel() == 0 ||
        (!x.is_contiguous() && x.is_non_overlapping_and_dense())) {
      ctx.output(0) = at::flip(x, dims);
      return;
    }
    const std::bitset<at::dim_bitset_size> flips = at::dim_list_to_bitset(dims, x.dim());
    at::Tensor& o = sizedOut(ctx, x.sizes(), x.options());
    if (!flipByElementSize(x, flips, o)) ctx.output(0) = at::flip(x, dims);
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
  r.outVariant("aten::_to_copy", toCopy);
  r.outVariant("aten::flip", flip);
  r.outVariant("aten::dropout", dropoutEval);
  r.outVariant("aten::zeros_like", zerosLike);
}

}  // namespace brisk::ops_cpu::out
