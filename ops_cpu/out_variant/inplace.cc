// In-place ops: add_ / sub_ / mul_ / div_ (Tensor and Scalar overloads, div_ with
// rounding_mode too), relu_, hardtanh_, clamp_, silu_, hardswish_, masked_fill_.Scalar,
// fill_.Tensor and eval-mode dropout_ (torch.export's default IR keeps them all).
//
// The frontend's RemoveTensorMutation turns these into their functional forms wherever
// alias analysis proves that safe, so the ones that reach a kernel are exactly those
// whose mutation is observable: the target is a view (`w[0].add_(1)`), is stored in a
// list or dict, is a model input, or is mutated inside a loop body. The kernel must
// therefore really write into `self` and return that same tensor, as the interpreter
// does. Memory planning needs nothing from the kernel for that: the schema marks the
// result as aliasing `self` (Tensor(a!)), so escape analysis and the planner treat it
// as a view of `self` and extend `self`'s lifetime over the result's readers; the
// kernel's contract is kFresh, so the runtime never retains or plans the result itself.
//
// Dense CPU tensors go straight to the structured CPU kernels' in-place entry points
// (at::cpu::add_ ...), which run the same TensorIterator kernel with the same checks
// (e.g. "result type Float can't be cast to the desired output type Long") as the
// dispatcher's op; the Scalar overloads wrap the scalar as ATen does (a 0-dim "wrapped
// number" tensor, precomputed when constant), so type promotion matches. Other tensors
// take the dispatcher's in-place op.
#include <ATen/CPUFunctions.h>
#include <ATen/ops/fill_native.h>
#include <ATen/ops/hardswish_native.h>
#include <ATen/ops/masked_fill_native.h>

#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/out_variant/operand.h"

namespace brisk::ops_cpu::out {
namespace {

using MaybeOwnedTensor = c10::MaybeOwned<at::Tensor>;

// `other` (input 1): a tensor, or a Scalar wrapped as ATen wraps it.
Operand otherArg(KernelBuildContext& b, bool scalar) { return scalar ? scalarOperand(b, 1) : tensorOperand(1); }

// A kernel that runs mutate(ctx, self) and returns `self` itself as output 0 (ATen's
// in-place contract).
template <class Mutate>
std::unique_ptr<Kernel> mutatingKernel(std::string desc, Mutate mutate) {
  return makeKernel(
      std::move(desc),
      [mutate](KernelContext& ctx) {
        at::Tensor self = ctx.tensor(0);
        mutate(ctx, self);
        ctx.output(0) = ctx.input(0);
      },
      OutputContract::kFresh);  // the output is `self`, the caller's tensor
}

// fast(self, other) runs the at::cpu in-place kernel; generic(self, other) the
// dispatcher's op. Both mutate `self`; output 0 is `self` itself.
template <class Fast, class Generic>
std::unique_ptr<Kernel> inPlaceKernel(std::string desc, Operand other, Fast fast, Generic generic) {
  return mutatingKernel(std::move(desc), [other = std::move(other), fast, generic](KernelContext& ctx, at::Tensor& self) {
    MaybeOwnedTensor b = other.get(ctx);
    if (isDenseCpu(self) && isDenseCpu(*b))
      fast(self, *b);
    else
      generic(self, *b);
  });
}

// Unary in-place op: fast(self) when `self` is dense CPU and ok(self), else the
// dispatcher's generic(self) (other dtypes and tensor kinds, ATen's errors).
template <class Ok, class Fast, class Generic>
std::unique_ptr<Kernel> unaryInPlaceKernel(std::string desc, Ok ok, Fast fast, Generic generic) {
  return mutatingKernel(std::move(desc), [ok, fast, generic](KernelContext&, at::Tensor& self) {
    if (isDenseCpu(self) && ok(self))
      fast(self);
    else
      generic(self);
  });
}

// relu_(self): ATen's clamp_min_(self, 0); bool tensors get ATen's error.
std::unique_ptr<Kernel> reluInPlace(KernelBuildContext& b) {
  if (numInputs(b) != 1) return nullptr;
  const c10::Scalar zero(0);
  return unaryInPlaceKernel(
      "at::cpu::clamp_min_ (in place)", [](const at::Tensor& s) { return s.scalar_type() != at::kBool; },
      [zero](at::Tensor& s) { at::cpu::clamp_min_(s, zero); }, [](at::Tensor& s) { at::relu_(s); });
}

// hardtanh_(self, min, max) with constant bounds: clamp_(self, min, max) for floating
// self (ATen's own definition); integer bounds handling and errors stay ATen's.
std::unique_ptr<Kernel> hardtanhInPlace(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  auto lo = constScalar(b, 1), hi = constScalar(b, 2);
  if (!lo || !hi) return nullptr;
  const c10::Scalar l = *lo, h = *hi;
  const c10::optional<c10::Scalar> lo_opt = l, hi_opt = h;
  return unaryInPlaceKernel(
      "at::cpu::clamp_ (in place)", [](const at::Tensor& s) { return c10::isFloatingType(s.scalar_type()); },
      [lo_opt, hi_opt](at::Tensor& s) { at::cpu::clamp_(s, lo_opt, hi_opt); },
      [l, h](at::Tensor& s) { at::hardtanh_(s, l, h); });
}

// add_ / sub_ (self, other, alpha): alpha is constant in practice (declines otherwise).
template <bool kSub>
KernelFactory addSubInPlace(bool scalar) {
  return [scalar](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    if (numInputs(b) != 3) return nullptr;
    const ScalarArg alpha = scalarArg(b, 2);
    if (!alpha.is_const) return nullptr;
    const c10::Scalar a = alpha.value;
    if (kSub)
      return inPlaceKernel(
          "at::cpu::sub_ (in place)", otherArg(b, scalar),
          [a](at::Tensor& s, const at::Tensor& o) { at::cpu::sub_(s, o, a); },
          [a](at::Tensor& s, const at::Tensor& o) { s.sub_(o, a); });
    return inPlaceKernel(
        "at::cpu::add_ (in place)", otherArg(b, scalar),
        [a](at::Tensor& s, const at::Tensor& o) { at::cpu::add_(s, o, a); },
        [a](at::Tensor& s, const at::Tensor& o) { s.add_(o, a); });
  };
}

KernelFactory mulInPlace(bool scalar) {
  return [scalar](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    if (numInputs(b) != 2) return nullptr;
    return inPlaceKernel(
        "at::cpu::mul_ (in place)", otherArg(b, scalar),
        [](at::Tensor& s, const at::Tensor& o) { at::cpu::mul_(s, o); },
        [](at::Tensor& s, const at::Tensor& o) { s.mul_(o); });
  };
}

// div_ (self, other) and div_ (self, other, *, rounding_mode): the mode must be a
// constant None, "trunc" or "floor" (declines otherwise).
KernelFactory divInPlace(bool scalar, bool with_mode) {
  return [scalar, with_mode](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    if (numInputs(b) != (with_mode ? 3u : 2u)) return nullptr;
    if (!with_mode || isConstNone(b, 2))
      return inPlaceKernel(
          "at::cpu::div_ (in place)", otherArg(b, scalar),
          [](at::Tensor& s, const at::Tensor& o) { at::cpu::div_(s, o); },
          [](at::Tensor& s, const at::Tensor& o) { s.div_(o); });
    if (!isConst(b, 2) || !constant(b, 2).isString()) return nullptr;
    // Held by the kernel (shared_ptr: a fixed address for the string_view).
    auto mode = std::make_shared<const std::string>(constant(b, 2).toStringRef());
    if (*mode != "trunc" && *mode != "floor") return nullptr;
    return inPlaceKernel(
        "at::cpu::div_(" + *mode + ") (in place)", otherArg(b, scalar),
        [mode](at::Tensor& s, const at::Tensor& o) { at::cpu::div_(s, o, c10::string_view(*mode)); },
        [mode](at::Tensor& s, const at::Tensor& o) { s.div_(o, c10::string_view(*mode)); });
  };
}

// clamp_(self, Scalar? min, Scalar? max) with constant bounds, at least one given
// (none: the interpreter's error). at::cpu::clamp_ is the op's own structured kernel,
// so every dtype it accepts (and its errors for the others) is ATen's.
std::unique_ptr<Kernel> clampInPlace(KernelBuildContext& b) {
  if (numInputs(b) != 3 || !isConst(b, 1) || !isConst(b, 2)) return nullptr;
  c10::optional<c10::Scalar> lo, hi;
  for (size_t i : {1, 2}) {
    const c10::IValue& v = constant(b, i);
    if (v.isNone()) continue;
    if (!v.isScalar()) return nullptr;
    (i == 1 ? lo : hi) = v.toScalar();
  }
  if (!lo && !hi) return nullptr;
  return unaryInPlaceKernel(
      "at::cpu::clamp_ (in place)", [](const at::Tensor&) { return true; },
      [lo, hi](at::Tensor& s) { at::cpu::clamp_(s, lo, hi); }, [lo, hi](at::Tensor& s) { at::clamp_(s, lo, hi); });
}

bool floatingSelf(const at::Tensor& s) { return c10::isFloatingType(s.scalar_type()); }

// silu_ / hardswish_(self) on floating self; other dtypes get ATen's error from the
// dispatcher's op.
std::unique_ptr<Kernel> siluInPlace(KernelBuildContext& b) {
  if (numInputs(b) != 1) return nullptr;
  return unaryInPlaceKernel(
      "at::cpu::silu_ (in place)", floatingSelf, [](at::Tensor& s) { at::cpu::silu_(s); },
      [](at::Tensor& s) { at::silu_(s); });
}

std::unique_ptr<Kernel> hardswishInPlace(KernelBuildContext& b) {
  if (numInputs(b) != 1) return nullptr;
  return unaryInPlaceKernel(
      "at::native::hardswish_ (in place)", floatingSelf, [](at::Tensor& s) { at::native::hardswish_(s); },
      [](at::Tensor& s) { at::hardswish_(s); });
}

// masked_fill_.Scalar(self, mask, value) with a constant value and a bool mask
// (at::native::masked_fill__cpu checks that the mask broadcasts to self, as ATen does);
// other masks (uint8: ATen's error) take the dispatcher's op.
std::unique_ptr<Kernel> maskedFillInPlace(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  auto value = constScalar(b, 2);
  if (!value) return nullptr;
  const c10::Scalar v = *value;
  return mutatingKernel("at::native::masked_fill__cpu (in place)", [v](KernelContext& ctx, at::Tensor& self) {
    const at::Tensor& mask = ctx.tensor(1);
    if (isDenseCpu(self) && isDenseCpu(mask) && mask.scalar_type() == at::kBool)
      at::native::masked_fill__cpu(self, mask, v);
    else
      self.masked_fill_(mask, v);
  });
}

// fill_.Tensor(self, value): value a 0-dim tensor (at::native::fill_ raises ATen's error
// for others).
std::unique_ptr<Kernel> fillInPlace(KernelBuildContext& b) {
  if (numInputs(b) != 2) return nullptr;
  return inPlaceKernel(
      "at::native::fill_ (in place)", tensorOperand(1),
      [](at::Tensor& s, const at::Tensor& v) { at::native::fill_(s, v); },
      [](at::Tensor& s, const at::Tensor& v) { s.fill_(v); });
}

// dropout_(self, p, train) with train a constant false: ATen returns self untouched.
// Training mode (random) is declined.
std::unique_ptr<Kernel> dropoutEvalInPlace(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  auto train = constBool(b, 2);
  if (!train || *train) return nullptr;
  return mutatingKernel("identity (eval dropout_)", [](KernelContext&, at::Tensor&) {});
}

}  // namespace

void registerInPlace(PluginRegistrar& r) {
  r.outVariant("aten::add_.Tensor", addSubInPlace<false>(false));
  r.outVariant("aten::add_.Scalar", addSubInPlace<false>(true));
  r.outVariant("aten::sub_.Tensor", addSubInPlace<true>(false));
  r.outVariant("aten::sub_.Scalar", addSubInPlace<true>(true));
  r.outVariant("aten::mul_.Tensor", mulInPlace(false));
  r.outVariant("aten::mul_.Scalar", mulInPlace(true));
  r.outVariant("aten::div_.Tensor", divInPlace(false, false));
  r.outVariant("aten::div_.Scalar", divInPlace(true, false));
  r.outVariant("aten::div_.Tensor_mode", divInPlace(false, true));
  r.outVariant("aten::div_.Scalar_mode", divInPlace(true, true));
  r.outVariant("aten::relu_", reluInPlace);
  r.outVariant("aten::hardtanh_", hardtanhInPlace);
  r.outVariant("aten::clamp_", clampInPlace);
  r.outVariant("aten::silu_", siluInPlace);
  r.outVariant("aten::hardswish_", hardswishInPlace);
  r.outVariant("aten::masked_fill_.Scalar", maskedFillInPlace);
  r.outVariant("aten::fill_.Tensor", fillInPlace);
  r.outVariant("aten::dropout_", dropoutEvalInPlace);
}

}  // namespace brisk::ops_cpu::out
