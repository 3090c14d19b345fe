// Activations: relu (as ATen does it: clamp_min(x, 0)), hardtanh / relu6 / clamp,
// sigmoid, tanh, gelu, silu, hardswish, hardsigmoid, softmax / _softmax, log_softmax /
// _log_softmax.
#include <ATen/CPUFunctions.h>
#include <ATen/ops/resize_native.h>

#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/out_variant/small_unary.h"

namespace brisk::ops_cpu::out {
namespace {

// With in-place reuse (the node's input 0 is free, core/graph/inplace_reuse.h): writes the
// result into x itself when it fits and returns x. Returns false when the normal path
// must run; the output slot is then cleared so that path stores a fresh tensor.
template <class OutFn>
bool runInPlace(KernelContext& ctx, const at::Tensor& x, c10::ScalarType result_dtype, OutFn&& out_fn) {
  if (!fitsInPlace(x, result_dtype, x.sizes())) {
    ctx.output(0) = c10::IValue();
    return false;
  }
  writeIntoInput(ctx, x, [&](at::Tensor& target) { out_fn(target, x); });
  return true;
}

// Unary op whose output dtype is the input's; `ok(x)` says when the out path applies
// (otherwise the dispatcher's functional op runs: other dtypes, other tensor kinds).
// `small_spec`: the op small_unary.h runs directly on small tensors (kNone: none).
template <class Ok, class OutFn, class Generic>
std::unique_ptr<Kernel> unarySameDtype(KernelBuildContext& b, std::string desc, Ok ok, OutFn out_fn, Generic generic,
                                       small::UnarySpec small_spec = {}) {
  const int reuse = reusableInput(b);
  if (small_spec.op != small::UnOp::kNone) desc += " (small: direct loop)";
  return makeKernelWithFastPath(
      describeReuse(std::move(desc), reuse),
      [small_spec, reuse](KernelContext& ctx) { return small::tryUnary(ctx, small_spec, ctx.tensor(0), reuse); },
      [ok, out_fn, generic, reuse](KernelContext& ctx) {
        const at::Tensor& x = ctx.tensor(0);
        if (!isDenseCpu(x) || !ok(x)) {
          ctx.output(0) = generic(x);
          return;
        }
        if (reuse == 0 && runInPlace(ctx, x, x.scalar_type(), out_fn)) return;
        if (at::Tensor* o = reusableOut(ctx, 0, x.scalar_type())) {
          out_fn(*o, x);
        } else {
          at::Tensor t = at::empty({0}, x.options());
          out_fn(t, x);
          ctx.output(0) = std::move(t);
        }
      },
      contractFor(reuse));
}

bool floating(const at::Tensor& x) { return c10::isFloatingType(x.scalar_type()); }

// Up to this many elements a contiguous fp32 relu is a plain loop: TensorIterator's
// setup in clamp_min_out costs more than the arithmetic at the sizes of a batch-1 MLP
// layer. Measured on torch 2.14 (one thread, AVX-512 CPU): the loop takes 0.02-0.4 us
// at 256-4096 elements, ATen 0.2-0.4 us; from about 4K elements ATen's AVX-512 kernel
// is faster (1.0 vs 0.6 us at 12.5K), so larger tensors keep ATen's kernel.
constexpr int64_t kSmallRelu = 4096;

// The values of ATen's clamp_min(x, 0) (std::max(a, 0) / max_ps(0, a)): NaN and -0.0
// pass through unchanged. The loops must be vectorized: at -O2 GCC leaves the select
// as a branch, which mispredicts on every other element of real activations (0.3 ns
// an element became 2.7). The select compiles to compare + and-not.
__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic"))) void reluLoop(const float* __restrict x,
                                                                                      float* __restrict y,
                                                                                      int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v < 0.0f ? 0.0f : v;
  }
}
__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic"))) void reluLoopInPlace(float* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = p[i];
    p[i] = v < 0.0f ? 0.0f : v;
  }
}

std::unique_ptr<Kernel> relu(KernelBuildContext& b) {
  if (numInputs(b) != 1) return nullptr;
  const c10::Scalar zero(0);
  const int reuse = reusableInput(b);
  return makeKernel(
      describeReuse("at::cpu::clamp_min_out (small fp32: loop)", reuse),
      [zero, reuse](KernelContext& ctx) {
        const at::Tensor& x = ctx.tensor(0);
        if (!isDenseCpu(x) || x.scalar_type() == at::kBool) {
          ctx.output(0) = at::relu(x);
          return;
        }
        const int64_t n = x.numel();
        if (reuse == 0) {
          const bool small = x.scalar_type() == at::kFloat && n <= kSmallRelu && x.is_contiguous();
          if (small && fitsInPlace(x, at::kFloat, x.sizes())) {
            reluLoopInPlace(x.data_ptr<float>(), n);
            ctx.output(0) = x;
            return;
          }
          if (runInPlace(ctx, x, x.scalar_type(),
                         [&zero](at::Tensor& o, const at::Tensor& in) { at::cpu::clamp_min_out(o, in, zero); }))
            return;
        }
        if (x.scalar_type() == at::kFloat && n <= kSmallRelu && x.is_contiguous()) {
          at::Tensor* o = retainedOut(ctx, 0, at::kFloat);
          if (o) {
            at::native::resize_(*o, x.sizes(), c10::nullopt);
            // An output that overlaps x (never, for a planned slab) or lost contiguity
            // takes the general path below.
            if (!o->is_contiguous() || o->is_same(x)) o = nullptr;
          }
          if (!o) {
            ctx.output(0) = at::empty(x.sizes(), x.options());
            o = &ctx.output(0).toTensor();
          }
          reluLoop(x.data_ptr<float>(), o->data_ptr<float>(), n);
          return;
        }
        if (at::Tensor* o = reusableOut(ctx, 0, x.scalar_type())) {
          at::cpu::clamp_min_out(*o, x, zero);
        } else {
          at::Tensor t = at::empty({0}, x.options());
          at::cpu::clamp_min_out(t, x, zero);
          ctx.output(0) = std::move(t);
        }
      },
      contractFor(reuse));
}

// hardtanh(x, min, max) == clamp(x, min, max) for floating x (ATen's own definition).
std::unique_ptr<Kernel> clampKernel(KernelBuildContext& b, std::string desc, c10::optional<c10::Scalar> lo,
                                    c10::optional<c10::Scalar> hi,
                                    std::function<at::Tensor(const at::Tensor&)> generic) {
  return unarySameDtype(
      b, std::move(desc), floating, [lo, hi](at::Tensor& o, const at::Tensor& x) { at::cpu::clamp_out(o, x, lo, hi); },
      std::move(generic), small::clampSpec(lo, hi));
}

std::unique_ptr<Kernel> hardtanh(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  auto lo = constScalar(b, 1), hi = constScalar(b, 2);
  if (!lo || !hi) return nullptr;
  c10::Scalar l = *lo, h = *hi;
  return clampKernel(b, "at::cpu::clamp_out", l, h, [l, h](const at::Tensor& x) { return at::hardtanh(x, l, h); });
}

std::unique_ptr<Kernel> relu6(KernelBuildContext& b) {
  if (numInputs(b) != 1) return nullptr;
  return clampKernel(b, "at::cpu::clamp_out(0, 6)", c10::Scalar(0), c10::Scalar(6),
                     [](const at::Tensor& x) { return at::relu6(x); });
}

std::unique_ptr<Kernel> clamp(KernelBuildContext& b) {
  if (numInputs(b) != 3 || !isConst(b, 1) || !isConst(b, 2)) return nullptr;
  c10::optional<c10::Scalar> lo, hi;
  if (!constant(b, 1).isNone()) {
    if (!constant(b, 1).isScalar()) return nullptr;
    lo = constant(b, 1).toScalar();
  }
  if (!constant(b, 2).isNone()) {
    if (!constant(b, 2).isScalar()) return nullptr;
    hi = constant(b, 2).toScalar();
  }
  if (!lo && !hi) return nullptr;  // the interpreter's error
  return clampKernel(b, "at::cpu::clamp_out", lo, hi, [lo, hi](const at::Tensor& x) { return at::clamp(x, lo, hi); });
}

// Unary float ops: integer inputs produce the default float dtype (sigmoid, tanh).
// `small_spec` as for unarySameDtype (the fast path takes floating inputs only).
template <class OutFn, class Generic>
std::unique_ptr<Kernel> unaryFloat(KernelBuildContext& b, std::string desc, OutFn out_fn, Generic generic,
                                   small::UnarySpec small_spec = {}) {
  const int reuse = reusableInput(b);
  if (small_spec.op != small::UnOp::kNone) desc += " (small: direct loop)";
  return makeKernelWithFastPath(
      describeReuse(std::move(desc), reuse),
      [small_spec, reuse](KernelContext& ctx) { return small::tryUnary(ctx, small_spec, ctx.tensor(0), reuse); },
      [out_fn, generic, reuse](KernelContext& ctx) {
        const at::Tensor& x = ctx.tensor(0);
        if (!isDenseCpu(x)) {
          ctx.output(0) = generic(x);
          return;
        }
        if (reuse == 0 && runInPlace(ctx, x, floatResultType(x.scalar_type()), out_fn)) return;
        writeOut(
            ctx, floatResultType(x.scalar_type()), [&](at::Tensor& o) { out_fn(o, x); }, [&] { return generic(x); });
      },
      contractFor(reuse));
}

std::unique_ptr<Kernel> sigmoid(KernelBuildContext& b) {
  if (numInputs(b) != 1) return nullptr;
  return unaryFloat(
      b, "at::cpu::sigmoid_out", [](at::Tensor& o, const at::Tensor& x) { at::cpu::sigmoid_out(o, x); },
      [](const at::Tensor& x) { return at::sigmoid(x); }, small::UnarySpec{small::UnOp::kSigmoid});
}

std::unique_ptr<Kernel> tanh(KernelBuildContext& b) {
  if (numInputs(b) != 1) return nullptr;
  return unaryFloat(
      b, "at::cpu::tanh_out", [](at::Tensor& o, const at::Tensor& x) { at::cpu::tanh_out(o, x); },
      [](const at::Tensor& x) { return at::tanh(x); });
}

std::unique_ptr<Kernel> gelu(KernelBuildContext& b) {
  if (numInputs(b) != 2 || !isConst(b, 1) || !constant(b, 1).isString()) return nullptr;
  auto approx = std::make_shared<const std::string>(constant(b, 1).toStringRef());
  if (*approx != "none" && *approx != "tanh") return nullptr;
  return unarySameDtype(
      b, "at::cpu::gelu_out", floating,
      [approx](at::Tensor& o, const at::Tensor& x) { at::cpu::gelu_out(o, x, *approx); },
      [approx](const at::Tensor& x) { return at::gelu(x, *approx); });
}

#define BRISK_FLOAT_UNARY(NAME)                                                                                       \
  std::unique_ptr<Kernel> NAME(KernelBuildContext& b) {                                                               \
    if (numInputs(b) != 1) return nullptr;                                                                            \
    return unarySameDtype(                                                                                            \
        b, "at::cpu::" #NAME "_out", floating, [](at::Tensor& o, const at::Tensor& x) { at::cpu::NAME##_out(o, x); }, \
        [](const at::Tensor& x) { return at::NAME(x); });                                                             \
  }
BRISK_FLOAT_UNARY(silu)
BRISK_FLOAT_UNARY(hardswish)
BRISK_FLOAT_UNARY(hardsigmoid)
#undef BRISK_FLOAT_UNARY

// ATen's _softmax / _log_softmax(x, dim, half_to_float=false) on floating x; other
// inputs take `generic`.
template <bool kLog, class Generic>
std::unique_ptr<Kernel> softmaxKernel(KernelBuildContext& b, int64_t d, Generic generic) {
  return unarySameDtype(
      b, kLog ? "at::cpu::_log_softmax_out" : "at::cpu::_softmax_out", floating,
      [d](at::Tensor& o, const at::Tensor& x) {
        if (kLog)
          at::cpu::_log_softmax_out(o, x, d, false);
        else
          at::cpu::_softmax_out(o, x, d, false);
      },
      std::move(generic));
}

// softmax.int / log_softmax.int with dtype=None: ATen's _softmax(x, dim, false).
template <bool kLog>
std::unique_ptr<Kernel> softmax(KernelBuildContext& b) {
  if (numInputs(b) != 3 || !isConstNone(b, 2)) return nullptr;
  auto dim = constInt(b, 1);
  if (!dim) return nullptr;
  const int64_t d = *dim;
  return softmaxKernel<kLog>(b, d, [d](const at::Tensor& x) { return kLog ? at::log_softmax(x, d) : at::softmax(x, d); });
}

// _softmax / _log_softmax(Tensor self, int dim, bool half_to_float) (core ATen IR).
// half_to_float is a CUDA-only option (ATen's CPU kernel rejects it): declined.
template <bool kLog>
std::unique_ptr<Kernel> softmaxUnderscore(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  auto dim = constInt(b, 1);
  auto half_to_float = constBool(b, 2);
  if (!dim || !half_to_float || *half_to_float) return nullptr;
  const int64_t d = *dim;
  return softmaxKernel<kLog>(
      b, d, [d](const at::Tensor& x) { return kLog ? at::_log_softmax(x, d, false) : at::_softmax(x, d, false); });
}

}  // namespace

void registerActivations(PluginRegistrar& r) {
  r.outVariant("aten::relu", relu);
  r.outVariant("aten::hardtanh", hardtanh);
  r.outVariant("aten::relu6", relu6);
  r.outVariant("aten::clamp", clamp);
  r.outVariant("aten::sigmoid", sigmoid);
  r.outVariant("aten::tanh", tanh);
  r.outVariant("aten::gelu", gelu);
  r.outVariant("aten::silu", silu);
  r.outVariant("aten::hardswish", hardswish);
  r.outVariant("aten::hardsigmoid", hardsigmoid);
  r.outVariant("aten::softmax.int", softmax<false>);
  r.outVariant("aten::_softmax", softmaxUnderscore<false>);
  r.outVariant("aten::_log_softmax", softmaxUnderscore<true>);
  r.outVariant("aten::log_softmax.int", softmax<true>);
}

}  // namespace brisk::ops_cpu::out
