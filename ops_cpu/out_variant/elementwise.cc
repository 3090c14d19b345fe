// Binary and unary elementwise ops: add/sub/mul/div (Tensor and Scalar overloads),
// comparisons, logical ops, neg, where, masked_fill.
//
// The Scalar overloads are what ATen does for them: the scalar wrapped as a 0-dim
// "wrapped number" tensor (precomputed when constant) fed to the Tensor kernel, so type
// promotion matches the interpreter exactly.
#include <ATen/CPUFunctions.h>
#include <ATen/ExpandUtils.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/masked_fill_native.h>

#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/out_variant/operand.h"
#include "ops_cpu/out_variant/small_binary.h"
#include "ops_cpu/out_variant/small_unary.h"

namespace brisk::ops_cpu::out {
namespace {

using MaybeOwnedTensor = c10::MaybeOwned<at::Tensor>;

enum class Promo { kResult, kTrueDiv, kBool };

inline c10::ScalarType binaryDtype(Promo p, const at::Tensor& a, const at::Tensor& b) {
  switch (p) {
    case Promo::kBool:
      return at::kBool;
    case Promo::kTrueDiv:
      return floatResultType(at::native::result_type(a, b));
    case Promo::kResult:
    default:
      return at::native::result_type(a, b);
  }
}

// --- same-shape fp32 operands: a plain loop ------------------------------------------

// add / sub (alpha = 1) and mul of two contiguous fp32 tensors of the same sizes (the
// core ATen IR's unrolled RNN cells: dozens of [batch, hidden] products and sums per
// step) run as one loop: at::cpu's TensorIterator set-up costs more than the arithmetic
// at these sizes. Same bits as ATen: a + b, a - b and a * b each round once, as ATen's
// kernels do (its add / sub are fma(b, +-alpha, a), exact for alpha = 1).
enum class Plain { kNone, kAdd, kSub, kMul };

bool plainApplies(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat && a.sizes().equals(b.sizes()) &&
         a.is_contiguous() && b.is_contiguous();
}

// `o` may be a or b itself (in-place reuse): each element is read before it is written.
void plainLoop(Plain op, const at::Tensor& a, const at::Tensor& b, at::Tensor& o) {
  const float* x = a.const_data_ptr<float>();
  const float* y = b.const_data_ptr<float>();
  float* z = o.data_ptr<float>();
  const int64_t n = a.numel();
  switch (op) {
    case Plain::kAdd:
      for (int64_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
      break;
    case Plain::kSub:
      for (int64_t i = 0; i < n; ++i) z[i] = x[i] - y[i];
      break;
    case Plain::kMul:
      for (int64_t i = 0; i < n; ++i) z[i] = x[i] * y[i];
      break;
    case Plain::kNone:
      break;
  }
}

// out_fn(out, a, b) writes into `out`; fresh(a, b) returns a new tensor through the
// at::cpu functional; generic(a, b) is the dispatcher op for unusual tensors.
// With in-place reuse (core/graph/inplace_reuse.h) of input `reuse` (0: a, 1: b), the result
// goes into that operand when it has the result's dtype and the other operand
// broadcasts to its sizes (so the result has them too); otherwise a fresh tensor.
// `plain`: the same-shape fp32 loop above serves operands it applies to (tensor
// operands only). `small`: the op small_binary.h runs directly on small tensors
// (kNone: none).
template <class OutFn, class FreshFn, class GenericFn>
std::unique_ptr<Kernel> binaryKernel(KernelBuildContext& bc, std::string desc, Operand other, Promo promo, OutFn out_fn,
                                     FreshFn fresh, GenericFn generic, Plain plain = Plain::kNone,
                                     small::BinarySpec small_spec = {}) {
  const int reuse = other.is_scalar && reusableInput(bc) == 1 ? -1 : reusableInput(bc);
  if (other.is_scalar) plain = Plain::kNone;
  if (plain != Plain::kNone) desc += " (same-shape fp32: a loop)";
  if (small_spec.op != small::BinOp::kNone) desc += " (small: direct loop)";
  auto fast = [other, small_spec, reuse](KernelContext& ctx) {
    if (small_spec.op == small::BinOp::kNone) return false;
    const at::Tensor& a = ctx.tensor(0);
    if (other.is_scalar) return small::tryScalar(ctx, small_spec, a, other.scalarNum(ctx), reuse);
    return small::tryTensors(ctx, small_spec, a, ctx.tensor(other.index), reuse);
  };
  return makeKernelWithFastPath(
      describeReuse(std::move(desc), reuse), std::move(fast),
      [other = std::move(other), promo, out_fn, fresh, generic, reuse, plain](KernelContext& ctx) {
        const at::Tensor& a = ctx.tensor(0);
        MaybeOwnedTensor b = other.get(ctx);
        if (!isDenseCpu(a) || !isDenseCpu(*b)) {
          ctx.output(0) = generic(a, *b);
          return;
        }
        const bool loop = plain != Plain::kNone && plainApplies(a, *b);
        const c10::ScalarType dt = loop ? at::kFloat : binaryDtype(promo, a, *b);
        if (reuse >= 0) {
          const at::Tensor& t = reuse == 0 ? a : *b;
          const at::Tensor& u = reuse == 0 ? *b : a;
          if (fitsInPlace(t, dt, t.sizes()) && broadcastsTo(u, t.sizes())) {
            writeIntoInput(ctx, t, [&](at::Tensor& target) {
              if (loop)
                plainLoop(plain, a, *b, target);
              else
                out_fn(target, a, *b);
            });
            return;
          }
          ctx.output(0) = c10::IValue();  // fresh below
        }
        if (loop) {
          plainLoop(plain, a, *b, sizedOut(ctx, a.sizes(), a.options()));
          return;
        }
        writeOut(
            ctx, dt, [&](at::Tensor& o) { out_fn(o, a, *b); }, [&] { return fresh(a, *b); });
      },
      contractFor(reuse));
}

// --- add / sub ---------------------------------------------------------------------

template <bool kSub>
KernelFactory addSub(bool scalar_other) {
  return [scalar_other](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    if (numInputs(b) != 3) return nullptr;
    Operand other = scalar_other ? scalarOperand(b, 1) : tensorOperand(1);
    ScalarArg alpha = scalarArg(b, 2);
    if (!alpha.is_const) return nullptr;
    const c10::Scalar a = alpha.value;
    const bool unit_alpha = !a.isComplex() && !a.isBoolean() && a.toDouble() == 1.0;
    const Plain plain = !unit_alpha ? Plain::kNone : kSub ? Plain::kSub : Plain::kAdd;
    if (kSub) {
      return binaryKernel(
          b, "at::cpu::sub_out", std::move(other), Promo::kResult,
          [a](at::Tensor& o, const at::Tensor& x, const at::Tensor& y) { at::cpu::sub_out(o, x, y, a); },
          [a](const at::Tensor& x, const at::Tensor& y) { return at::cpu::sub(x, y, a); },
          [a](const at::Tensor& x, const at::Tensor& y) { return at::sub(x, y, a); }, plain,
          small::addSpec(a, /*sub=*/true));
    }
    return binaryKernel(
        b, "at::cpu::add_out", std::move(other), Promo::kResult,
        [a](at::Tensor& o, const at::Tensor& x, const at::Tensor& y) { at::cpu::add_out(o, x, y, a); },
        [a](const at::Tensor& x, const at::Tensor& y) { return at::cpu::add(x, y, a); },
        [a](const at::Tensor& x, const at::Tensor& y) { return at::add(x, y, a); }, plain,
        small::addSpec(a, /*sub=*/false));
  };
}

KernelFactory mul(bool scalar_other) {
  return [scalar_other](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    if (numInputs(b) != 2) return nullptr;
    return binaryKernel(
        b, "at::cpu::mul_out", scalar_other ? scalarOperand(b, 1) : tensorOperand(1), Promo::kResult,
        [](at::Tensor& o, const at::Tensor& x, const at::Tensor& y) { at::cpu::mul_out(o, x, y); },
        [](const at::Tensor& x, const at::Tensor& y) { return at::cpu::mul(x, y); },
        [](const at::Tensor& x, const at::Tensor& y) { return at::mul(x, y); }, Plain::kMul,
        small::BinarySpec{small::BinOp::kMul});
  };
}

KernelFactory div(bool scalar_other, bool with_mode) {
  return [scalar_other, with_mode](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    if (numInputs(b) != (with_mode ? 3u : 2u)) return nullptr;
    Operand other = scalar_other ? scalarOperand(b, 1) : tensorOperand(1);
    if (!with_mode) {
      return binaryKernel(
          b, "at::cpu::div_out", std::move(other), Promo::kTrueDiv,
          [](at::Tensor& o, const at::Tensor& x, const at::Tensor& y) { at::cpu::div_out(o, x, y); },
          [](const at::Tensor& x, const at::Tensor& y) { return at::cpu::div(x, y); },
          [](const at::Tensor& x, const at::Tensor& y) { return at::div(x, y); }, Plain::kNone,
          small::BinarySpec{small::BinOp::kDiv});
    }
    if (!isConst(b, 2)) return nullptr;
    const c10::IValue& m = constant(b, 2);
    if (m.isNone()) {
      return binaryKernel(
          b, "at::cpu::div_out", std::move(other), Promo::kTrueDiv,
          [](at::Tensor& o, const at::Tensor& x, const at::Tensor& y) { at::cpu::div_out(o, x, y, c10::nullopt); },
          [](const at::Tensor& x, const at::Tensor& y) { return at::cpu::div(x, y, c10::nullopt); },
          [](const at::Tensor& x, const at::Tensor& y) { return at::div(x, y, c10::nullopt); }, Plain::kNone,
          small::BinarySpec{small::BinOp::kDiv});
    }
    if (!m.isString()) return nullptr;
    // The mode string lives in the kernel (shared_ptr keeps it at a fixed address).
    auto mode = std::make_shared<const std::string>(m.toStringRef());
    if (*mode != "trunc" && *mode != "floor") return nullptr;
    return binaryKernel(
        b, "at::cpu::div_out(" + *mode + ")", std::move(other), Promo::kResult,
        [mode](at::Tensor& o, const at::Tensor& x, const at::Tensor& y) {
          at::cpu::div_out(o, x, y, c10::string_view(*mode));
        },
        [mode](const at::Tensor& x, const at::Tensor& y) { return at::cpu::div(x, y, c10::string_view(*mode)); },
        [mode](const at::Tensor& x, const at::Tensor& y) { return at::div(x, y, c10::string_view(*mode)); });
  };
}

// --- comparisons -----------------------------------------------------------------------

#define BRISK_COMPARISON(NAME)                                                                           \
  KernelFactory NAME##Factory(bool scalar_other) {                                                       \
    return [scalar_other](KernelBuildContext& b) -> std::unique_ptr<Kernel> {                            \
      if (numInputs(b) != 2) return nullptr;                                                             \
      if (scalar_other) {                                                                                \
        ScalarArg s = scalarArg(b, 1);                                                                   \
        if (!s.is_const) return nullptr;                                                                 \
        const c10::Scalar v = s.value;                                                                   \
        return makeKernel("at::cpu::" #NAME "_out(Scalar)", [v](KernelContext& ctx) {                    \
          const at::Tensor& x = ctx.tensor(0);                                                           \
          if (!isDenseCpu(x)) {                                                                          \
            ctx.output(0) = at::NAME(x, v);                                                              \
            return;                                                                                      \
          }                                                                                              \
          writeOut(                                                                                      \
              ctx, at::kBool, [&](at::Tensor& o) { at::cpu::NAME##_out(o, x, v); },                      \
              [&] { return at::cpu::NAME(x, v); });                                                      \
        });                                                                                              \
      }                                                                                                  \
      return binaryKernel(                                                                               \
          b, "at::cpu::" #NAME "_out", tensorOperand(1), Promo::kBool,                                   \
          [](at::Tensor& o, const at::Tensor& x, const at::Tensor& y) { at::cpu::NAME##_out(o, x, y); }, \
          [](const at::Tensor& x, const at::Tensor& y) { return at::cpu::NAME(x, y); },                  \
          [](const at::Tensor& x, const at::Tensor& y) { return at::NAME(x, y); });                      \
    };                                                                                                   \
  }

BRISK_COMPARISON(eq)
BRISK_COMPARISON(ne)
BRISK_COMPARISON(lt)
BRISK_COMPARISON(le)
BRISK_COMPARISON(gt)
BRISK_COMPARISON(ge)
#undef BRISK_COMPARISON

// --- logical ---------------------------------------------------------------------------

// logical_or / logical_and: one kernel shape, the op's out= and functional forms given.
template <at::Tensor& (*kOut)(at::Tensor&, const at::Tensor&, const at::Tensor&),
          at::Tensor (*kFunctional)(const at::Tensor&, const at::Tensor&)>
std::unique_ptr<Kernel> logicalBinary(KernelBuildContext& b, const char* what) {
  if (numInputs(b) != 2) return nullptr;
  return binaryKernel(
      b, what, tensorOperand(1), Promo::kBool,
      [](at::Tensor& o, const at::Tensor& x, const at::Tensor& y) { kOut(o, x, y); },
      [](const at::Tensor& x, const at::Tensor& y) { return kFunctional(x, y); },
      [](const at::Tensor& x, const at::Tensor& y) { return kFunctional(x, y); });
}

std::unique_ptr<Kernel> logicalOr(KernelBuildContext& b) {
  return logicalBinary<at::cpu::logical_or_out, at::logical_or>(b, "at::cpu::logical_or_out");
}

std::unique_ptr<Kernel> logicalAnd(KernelBuildContext& b) {
  return logicalBinary<at::cpu::logical_and_out, at::logical_and>(b, "at::cpu::logical_and_out");
}

std::unique_ptr<Kernel> logicalNot(KernelBuildContext& b) {
  if (numInputs(b) != 1) return nullptr;
  return makeKernel("at::cpu::logical_not_out", [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x)) {
      ctx.output(0) = at::logical_not(x);
      return;
    }
    writeOut(
        ctx, at::kBool, [&](at::Tensor& o) { at::cpu::logical_not_out(o, x); }, [&] { return at::logical_not(x); });
  });
}

// --- neg -------------------------------------------------------------------------------

std::unique_ptr<Kernel> neg(KernelBuildContext& b) {
  if (numInputs(b) != 1) return nullptr;
  return makeKernelWithFastPath(
      "at::cpu::neg_out (small: direct loop)",
      [](KernelContext& ctx) { return small::tryUnary(ctx, small::UnarySpec{small::UnOp::kNeg}, ctx.tensor(0), -1); },
      [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x) || x.scalar_type() == at::kBool) {
      ctx.output(0) = at::neg(x);  // bool: the interpreter's error
      return;
    }
    writeOut(
        ctx, x.scalar_type(), [&](at::Tensor& o) { at::cpu::neg_out(o, x); }, [&] { return at::cpu::neg(x); });
  });
}

// --- where -----------------------------------------------------------------------------

std::unique_ptr<Kernel> whereSelf(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  return makeKernel("at::cpu::where_out", [](KernelContext& ctx) {
    const at::Tensor& c = ctx.tensor(0);
    const at::Tensor& x = ctx.tensor(1);
    const at::Tensor& y = ctx.tensor(2);
    if (!isDenseCpu(c) || !isDenseCpu(x) || !isDenseCpu(y)) {
      ctx.output(0) = at::where(c, x, y);
      return;
    }
    writeOut(
        ctx, at::native::result_type(x, y), [&](at::Tensor& o) { at::cpu::where_out(o, c, x, y); },
        [&] { return at::where(c, x, y); });
  });
}

// --- masked_fill -----------------------------------------------------------------------
// The functional op: result = expand(self, broadcast(self, mask)).clone(contiguous);
// result.masked_fill_(mask, value).

void masked_fill_into(at::Tensor& o, const at::Tensor& self, const at::Tensor& mask, const c10::Scalar* sv,
                      const at::Tensor* tv) {
  if (mask.sizes().equals(self.sizes())) {
    at::native::resize_(o, self.sizes(), c10::nullopt);
    at::native::copy_(o, self, false);
  } else {
    std::vector<int64_t> shape = at::infer_size(self.sizes(), mask.sizes());
    at::native::resize_(o, shape, c10::nullopt);
    if (self.sizes().equals(shape))
      at::native::copy_(o, self, false);
    else
      at::native::copy_(o, self.expand(shape), false);
  }
  if (sv)
    at::native::masked_fill__cpu(o, mask, *sv);
  else
    at::native::masked_fill__cpu(o, mask, *tv);
}

KernelFactory maskedFill(bool tensor_value) {
  return [tensor_value](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    if (numInputs(b) != 3) return nullptr;
    if (tensor_value) {
      return makeKernel("at::native::masked_fill__cpu(Tensor)", [](KernelContext& ctx) {
        const at::Tensor& x = ctx.tensor(0);
        const at::Tensor& m = ctx.tensor(1);
        const at::Tensor& v = ctx.tensor(2);
        if (!isDenseCpu(x) || !isDenseCpu(m) || !isDenseCpu(v) || m.scalar_type() != at::kBool || v.dim() != 0) {
          ctx.output(0) = at::masked_fill(x, m, v);
          return;
        }
        at::Tensor* o = reusableOut(ctx, 0, x.scalar_type());
        if (!o) {
          ctx.output(0) = at::masked_fill(x, m, v);
          return;
        }
        masked_fill_into(*o, x, m, nullptr, &v);
      });
    }
    ScalarArg s = scalarArg(b, 2);
    if (!s.is_const) return nullptr;
    const c10::Scalar v = s.value;
    return makeKernel("at::native::masked_fill__cpu", [v](KernelContext& ctx) {
      const at::Tensor& x = ctx.tensor(0);
      const at::Tensor& m = ctx.tensor(1);
      if (!isDenseCpu(x) || !isDenseCpu(m) || m.scalar_type() != at::kBool) {
        ctx.output(0) = at::masked_fill(x, m, v);
        return;
      }
      at::Tensor* o = reusableOut(ctx, 0, x.scalar_type());
      if (!o) {
        ctx.output(0) = at::masked_fill(x, m, v);
        return;
      }
      masked_fill_into(*o, x, m, &v, nullptr);
    });
  };
}

}  // namespace

void registerElementwise(PluginRegistrar& r) {
  r.outVariant("aten::add.Tensor", addSub<false>(false));
  r.outVariant("aten::add.Scalar", addSub<false>(true));
  r.outVariant("aten::sub.Tensor", addSub<true>(false));
  r.outVariant("aten::sub.Scalar", addSub<true>(true));
  r.outVariant("aten::mul.Tensor", mul(false));
  r.outVariant("aten::mul.Scalar", mul(true));
  r.outVariant("aten::div.Tensor", div(false, false));
  r.outVariant("aten::div.Scalar", div(true, false));
  r.outVariant("aten::div.Tensor_mode", div(false, true));
  r.outVariant("aten::div.Scalar_mode", div(true, true));
  r.outVariant("aten::eq.Tensor", eqFactory(false));
  r.outVariant("aten::eq.Scalar", eqFactory(true));
  r.outVariant("aten::ne.Tensor", neFactory(false));
  r.outVariant("aten::ne.Scalar", neFactory(true));
  r.outVariant("aten::lt.Tensor", ltFactory(false));
  r.outVariant("aten::lt.Scalar", ltFactory(true));
  r.outVariant("aten::le.Tensor", leFactory(false));
  r.outVariant("aten::le.Scalar", leFactory(true));
  r.outVariant("aten::gt.Tensor", gtFactory(false));
  r.outVariant("aten::gt.Scalar", gtFactory(true));
  r.outVariant("aten::ge.Tensor", geFactory(false));
  r.outVariant("aten::ge.Scalar", geFactory(true));
  r.outVariant("aten::logical_or", logicalOr);
  r.outVariant("aten::logical_and", logicalAnd);
  r.outVariant("aten::logical_not", logicalNot);
  r.outVariant("aten::neg", neg);
  r.outVariant("aten::where.self", whereSelf);
  r.outVariant("aten::masked_fill.Scalar", maskedFill(false));
  r.outVariant("aten::masked_fill.Tensor", maskedFill(true));
}

}  // namespace brisk::ops_cpu::out
