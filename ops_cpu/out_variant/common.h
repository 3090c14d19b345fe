#pragma once
// Shared helpers for the out-variant kernels (ops_cpu/out_variant/).
//
// Every kernel follows the same contract:
//  * the factory reads constant arguments once (scalars, dims, weights) and declines
//    (returns null) for argument combinations it does not implement, so the node falls
//    through to the native registry / fallback;
//  * run() writes into the retained output tensor when the slot holds one of the right
//    dtype (resized to zero first, so the _out function re-derives sizes and strides
//    exactly as the functional op would), otherwise it stores a fresh result;
//  * inputs that are not plain dense CPU tensors, or dtypes a kernel does not handle,
//    take a "generic" path through the dispatcher's functional op, which is always
//    correct (same values, same errors as the interpreter).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/function_schema.h>
#include <ATen/ops/resize_native.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/graph.h"
#include "core/kernels/kernel.h"
#include "core/kernels/kernel_registry.h"
#include "core/kernels/plugin.h"

namespace brisk::ops_cpu::out {

// The kernels call at::cpu:: / at::native:: entry points directly, i.e. below the
// autograd and ADInplaceOrView dispatch keys; some ATen CPU kernels assert they are
// (e.g. gelu's oneDNN path), so run() excludes those keys as the dispatcher would
// (the runtime runs without grad mode, so nothing is lost).
// `outputs` is the kernel's OutputContract (core/kernels/kernel.h): kReused for kernels
// that write into the output they are given; others say what they do instead. `kind`
// is the registry it is registered in.
template <class F>
std::unique_ptr<Kernel> makeKernel(std::string desc, F f, OutputContract outputs = OutputContract::kReused,
                                   KernelKind kind = KernelKind::kOutVariant) {
  return functionKernel(
      kind, outputs,
      [f = std::move(f)](KernelContext& ctx) {
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        f(ctx);
      },
      std::move(desc));
}

// makeKernel with a fast path: fast(ctx) runs first, outside the dispatch-key guard
// (whose TLS save / restore is a measurable part of a one-element op); it returns false
// to hand the call to f, which runs as under makeKernel. fast must only call ATen
// entry points that do not care about the autograd keys (factories, at::native::).
template <class Fast, class F>
std::unique_ptr<Kernel> makeKernelWithFastPath(std::string desc, Fast fast, F f,
                                               OutputContract outputs = OutputContract::kReused) {
  return functionKernel(
      KernelKind::kOutVariant, outputs,
      [fast = std::move(fast), f = std::move(f)](KernelContext& ctx) {
        if (fast(ctx)) return;
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        f(ctx);
      },
      std::move(desc));
}

// A plain strided CPU tensor (not quantized, sparse, mkldnn, nested, meta...).
inline bool isDenseCpu(const at::Tensor& t) {
  return t.unsafeGetTensorImpl()->key_set().has(c10::DispatchKey::CPU);
}

// Makes `t` a zero-element contiguous tensor without touching its storage, so a
// following _out call resizes it (no "resized a non-empty tensor" warning), keeps the
// storage's capacity and recomputes the strides the functional op would choose.
inline void resizeToZero(at::Tensor& t) {
  t.unsafeGetTensorImpl()->set_sizes_contiguous({0});
}

// The retained output tensor, prepared for an _out call, or null when the slot is
// empty or holds a tensor of another dtype (the caller then stores a fresh result).
inline at::Tensor* reusableOut(KernelContext& ctx, size_t i, c10::ScalarType dtype) {
  c10::IValue& o = ctx.output(i);
  if (!o.isTensor()) return nullptr;
  at::Tensor& t = o.toTensor();
  if (t.scalar_type() != dtype || !isDenseCpu(t)) return nullptr;
  resizeToZero(t);
  return &t;
}

// Like reusableOut, but keeps the current sizes (for kernels that size the output
// themselves with at::native::resize_).
inline at::Tensor* retainedOut(KernelContext& ctx, size_t i, c10::ScalarType dtype) {
  c10::IValue& o = ctx.output(i);
  if (!o.isTensor()) return nullptr;
  at::Tensor& t = o.toTensor();
  if (t.scalar_type() != dtype || !isDenseCpu(t)) return nullptr;
  return &t;
}

// fp32 output i sized `sizes`, for kernels that write it through a raw pointer: the
// retained tensor resized when the slot holds a contiguous fp32 one, else a new tensor.
inline float* sizedFloatOutput(KernelContext& ctx, size_t i, c10::IntArrayRef sizes) {
  if (at::Tensor* o = retainedOut(ctx, i, at::kFloat)) {
    at::native::resize_(*o, sizes, c10::nullopt);
    if (o->is_contiguous()) return o->data_ptr<float>();
  }
  ctx.output(i) = at::empty(sizes, at::TensorOptions().dtype(at::kFloat));
  return ctx.output(i).toTensor().data_ptr<float>();
}

inline c10::ScalarType defaultFloat() { return c10::typeMetaToScalarType(at::get_default_dtype()); }

// Result dtype of unary ops that promote integers to the default float dtype.
inline c10::ScalarType floatResultType(c10::ScalarType t) {
  return c10::isIntegralType(t, /*includeBool=*/true) ? defaultFloat() : t;
}

// Output 0 sized `sizes` for a kernel that writes the elements itself: the reusable
// (retained, possibly planned) output resized in place, or a fresh tensor with `opts`.
inline at::Tensor& sizedOut(KernelContext& ctx, at::IntArrayRef sizes, const at::TensorOptions& opts) {
  if (at::Tensor* o = reusableOut(ctx, 0, c10::typeMetaToScalarType(opts.dtype()))) {
    at::native::resize_(*o, sizes, c10::nullopt);
    return *o;
  }
  ctx.output(0) = at::empty(sizes, opts);
  return ctx.output(0).toTensor();
}

// Runs fn(begin, end) over planes [0, planes): split across intra-op threads when there
// are several (at least ~16K elements per task, `plane_elems` each), inline otherwise.
template <class Fn>
inline void forPlanes(int64_t planes, int64_t plane_elems, Fn&& fn) {
  if (at::get_num_threads() > 1 && planes > 1) {
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, plane_elems));
    at::parallel_for(0, planes, grain, fn);
  } else {
    fn(0, planes);
  }
}

// Writes into the reusable output 0 (dtype `dt`) with `out_fn(Tensor&)`, or stores
// `fresh()` when there is none.
template <class OutFn, class FreshFn>
inline void writeOut(KernelContext& ctx, c10::ScalarType dt, OutFn&& out_fn, FreshFn&& fresh) {
  if (at::Tensor* o = reusableOut(ctx, 0, dt)) {
    out_fn(*o);
  } else {
    ctx.output(0) = fresh();
  }
}

// --- in-place reuse (core/graph/inplace_reuse.h) -------------------------------------------

// The node's input the kernel may write its result into, or -1. Such a kernel's
// contract is kIntoInput: its output is that input (or, when the result does not fit, a
// fresh tensor), never a retained or planned tensor of its own.
inline int reusableInput(KernelBuildContext& b) { return b.node().reusableInput(); }
inline OutputContract contractFor(int reuse) { return reuse >= 0 ? OutputContract::kIntoInput : OutputContract::kReused; }
inline std::string describeReuse(std::string desc, int reuse) {
  return reuse >= 0 ? desc + " (into input " + std::to_string(reuse) + " when it fits)" : desc;
}

// True when the result (dtype `dt`, sizes `sizes`) can be written into `t` in place:
// a dense CPU tensor of that dtype and those sizes whose elements do not overlap.
inline bool fitsInPlace(const at::Tensor& t, c10::ScalarType dt, at::IntArrayRef sizes) {
  return isDenseCpu(t) && t.scalar_type() == dt && t.sizes() == sizes && t.is_non_overlapping_and_dense();
}

// Runs fn(target) with `target` the same TensorImpl as the input `t` (ATen's in-place
// contract: an _out call whose output fully overlaps an input is fine) and stores it as
// output 0. The caller has checked fitsInPlace.
template <class Fn>
inline void writeIntoInput(KernelContext& ctx, const at::Tensor& t, Fn&& fn) {
  at::Tensor target = t;
  fn(target);
  ctx.output(0) = std::move(target);
}

// True when `t` broadcasts to `sizes` (so an elementwise result has those sizes).
inline bool broadcastsTo(const at::Tensor& t, at::IntArrayRef sizes) {
  const int64_t d = t.dim(), n = static_cast<int64_t>(sizes.size());
  if (d > n) return false;
  for (int64_t i = 1; i <= d; ++i) {
    const int64_t s = t.size(d - i);
    if (s != 1 && s != sizes[n - i]) return false;
  }
  return true;
}

// --- load-time argument helpers ------------------------------------------------------

inline const Node& nodeOf(KernelBuildContext& b) { return b.node(); }
inline size_t numInputs(KernelBuildContext& b) { return b.node().inputs().size(); }
inline bool isConst(KernelBuildContext& b, size_t i) { return b.node().input(i)->isConstant(); }
inline const c10::IValue& constant(KernelBuildContext& b, size_t i) { return b.node().input(i)->constant(); }
inline bool isConstNone(KernelBuildContext& b, size_t i) { return isConst(b, i) && constant(b, i).isNone(); }

inline std::optional<int64_t> constInt(KernelBuildContext& b, size_t i) {
  if (!isConst(b, i) || !constant(b, i).isInt()) return std::nullopt;
  return constant(b, i).toInt();
}
inline std::optional<bool> constBool(KernelBuildContext& b, size_t i) {
  if (!isConst(b, i) || !constant(b, i).isBool()) return std::nullopt;
  return constant(b, i).toBool();
}
inline std::optional<double> constDouble(KernelBuildContext& b, size_t i) {
  if (!isConst(b, i)) return std::nullopt;
  const c10::IValue& v = constant(b, i);
  if (v.isDouble()) return v.toDouble();
  if (v.isInt()) return static_cast<double>(v.toInt());
  return std::nullopt;
}
inline std::optional<std::vector<int64_t>> constInts(KernelBuildContext& b, size_t i) {
  if (!isConst(b, i)) return std::nullopt;
  const c10::IValue& v = constant(b, i);
  if (v.isIntList()) return v.toIntVector();
  if (v.isInt()) return std::vector<int64_t>{v.toInt()};
  return std::nullopt;
}
// A constant Scalar argument (int/float/bool/complex), or nullopt.
inline std::optional<c10::Scalar> constScalar(KernelBuildContext& b, size_t i) {
  if (!isConst(b, i)) return std::nullopt;
  const c10::IValue& v = constant(b, i);
  if (v.isScalar()) return v.toScalar();
  return std::nullopt;
}
// A constant tensor (e.g. a frozen weight), or an undefined tensor.
inline at::Tensor constTensor(KernelBuildContext& b, size_t i) {
  if (!isConst(b, i) || !constant(b, i).isTensor()) return at::Tensor();
  return constant(b, i).toTensor();
}

// Expands an int[N] argument ([k] means [k]*N).
inline std::vector<int64_t> expandInts(std::vector<int64_t> v, size_t n) {
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  return v;
}

// True when any of `node`'s outputs in [first, end) is read by another node, returned
// by a block, or is a graph output. Load-time only.
bool outputsUsed(const Node& node, size_t first);

// A Scalar argument that is constant (kept) or read from its slot at run time.
struct ScalarArg {
  bool is_const = false;
  c10::Scalar value;
  size_t index = 0;
  c10::Scalar get(const KernelContext& ctx) const { return is_const ? value : ctx.input(index).toScalar(); }
};
inline ScalarArg scalarArg(KernelBuildContext& b, size_t i) {
  ScalarArg a;
  a.index = i;
  if (auto s = constScalar(b, i)) {
    a.is_const = true;
    a.value = *s;
  }
  return a;
}

// --- family registration -------------------------------------------------------------

void registerElementwise(PluginRegistrar& r);
void registerActivations(PluginRegistrar& r);
void registerConv(PluginRegistrar& r);
void registerLinear(PluginRegistrar& r);
void registerReductions(PluginRegistrar& r);
void registerPooling(PluginRegistrar& r);
void registerNorms(PluginRegistrar& r);
void registerEmbedding(PluginRegistrar& r);
void registerEmbeddingBag(PluginRegistrar& r);
void registerShapeCopy(PluginRegistrar& r);
void registerFactories(PluginRegistrar& r);
void registerInPlace(PluginRegistrar& r);
void registerMathOps(PluginRegistrar& r);
void registerNewZeros(PluginRegistrar& r);
void registerIndexing(PluginRegistrar& r);
void registerResizePad(PluginRegistrar& r);
void registerEinsum(PluginRegistrar& r);

}  // namespace brisk::ops_cpu::out
