#pragma once
// Small-tensor fast path of add / sub / mul / div (elementwise.cc): a direct loop instead
// of ATen's TensorIterator, whose set-up (operand analysis, type promotion, dimension
// coalescing, output resize checks, dispatch through the stub) costs ~0.5 us per call,
// while the arithmetic on a one-element tensor costs a nanosecond. Models that chain
// many ops on scalars or tiny tensors spend nearly all their time there.
//
// The path takes only cases whose result it can reproduce bit for bit, and says no
// (planBinary() returns !ok) for everything else, which then goes to ATen unchanged:
//  * dtypes: the result dtype is float32, float64 or int64 (div: floating only, as ATen's
//    int division is true division into a float dtype);
//  * operands of the same dtype, or one of them a 0-dim tensor (or a Scalar argument)
//    that ATen's type promotion lets the other's dtype absorb: a 0-dim tensor or a
//    Scalar of the same or a lower category (int into float; never float into int);
//  * shapes: equal sizes, or one operand with a single element whose dim is at most the
//    other's (so broadcasting yields the other's sizes);
//  * non-scalar operands contiguous; plain dense CPU tensors (no neg / conj bits);
//  * at most kMaxElems result elements (well above that ATen's vectorized loop wins).
//
// Arithmetic as ATen's CPU kernels do it for these dtypes: one rounding per op, the
// scalar operand converted to the result dtype first (static_cast, as TensorIterator
// does for CPU scalars), add as a + alpha * b (exact a + b for alpha = 1; another alpha
// only where ATen's rounding is known, see alphaSupported), sub as add with -alpha,
// integer arithmetic wrapping.
#include <ATen/ATen.h>
#include <ATen/Version.h>
#include <ATen/ops/resize_native.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "core/kernels/kernel.h"
#include "ops_cpu/out_variant/small_scalar.h"

namespace brisk::ops_cpu::out::small {

// Result elements up to which the direct loop runs. Measured on this build (one thread,
// AVX2 capability, best of 7 x 20000 calls, ns per call; the machine was shared):
//   n             1    16    64   128   256   512  1024  4096
//   ATen add_out  508  571  569   574   580   564   553  1928
//   loop add      33   34   58    107   125   420   522  3811
// (Tensor-Scalar mul: ATen 2.7-3.9 us at every n up to 1024 through the wrapped-number
// tensor, the loop 22 ns at n = 1, 288 ns at 256.) The loop is scalar code and stops
// winning near 1K elements; 256 keeps a 4x margin and leaves bigger tensors to ATen's
// vectorized (and, from ~32K elements, multi-threaded) kernels.
constexpr int64_t kMaxElems = 256;

// sub is kAdd with alpha negated (ATen: sub(a, b, alpha) == add(a, b, -alpha)).
enum class BinOp : uint8_t { kNone, kAdd, kMul, kDiv };

// What an op node fixes at load: the op and add's alpha.
struct BinarySpec {
  BinOp op = BinOp::kNone;
  Num alpha = Num::of(c10::Scalar(1));  // kAdd only; sign already applied for sub
  bool unit_alpha = true;
};

// The load-time spec of add / sub with a constant alpha (kNone: bool or complex alpha,
// left to ATen).
inline BinarySpec addSpec(const c10::Scalar& alpha, bool sub) {
  BinarySpec s;
  s.alpha = Num::of(alpha);
  if (s.alpha.kind == Num::kNone) return s;
  s.op = BinOp::kAdd;
  if (sub) {
    // Negating the minimum int64 wraps, as ATen's Scalar negation does.
    if (s.alpha.kind == Num::kInt)
      s.alpha.i = static_cast<int64_t>(0 - static_cast<uint64_t>(s.alpha.i));
    else
      s.alpha.f = -s.alpha.f;
  }
  s.unit_alpha = s.alpha.kind == Num::kInt ? s.alpha.i == 1 : s.alpha.f == 1.0;
  return s;
}

// Plain strided CPU tensor without the lazy neg / conj bits (whose values are not the
// memory's).
inline bool plainCpu(const at::Tensor& t) {
  const c10::DispatchKeySet ks = t.unsafeGetTensorImpl()->key_set();
  return ks.has(c10::DispatchKey::CPU) && !ks.has(c10::DispatchKey::Negative) && !ks.has(c10::DispatchKey::Conjugate);
}

inline bool fastDtype(c10::ScalarType t) { return t == at::kFloat || t == at::kDouble || t == at::kLong; }

// The dtype a dimensioned operand of dtype `d` keeps against a 0-dim operand of dtype
// `z` (ATen's result_type: a 0-dim tensor only promotes when its category is higher),
// or Undefined when the fast path does not take the pair.
inline c10::ScalarType absorb(c10::ScalarType d, c10::ScalarType z) {
  if (z != at::kFloat && z != at::kDouble && z != at::kLong && z != at::kInt) return c10::ScalarType::Undefined;
  if (c10::isIntegralType(d, false) && c10::isFloatingType(z)) return c10::ScalarType::Undefined;
  return d;
}

// How the fast path would run a (Tensor, Tensor) call: which operand is a broadcast
// scalar, the result dtype and sizes. ok == false: leave it to ATen.
struct Plan {
  bool ok = false;
  bool a_scalar = false;
  bool b_scalar = false;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  const at::Tensor* shape = nullptr;  // the operand whose sizes the result has
};

inline Plan planBinary(BinOp op, const at::Tensor& a, const at::Tensor& b) {
  Plan p;
  if (!plainCpu(a) || !plainCpu(b)) return p;
  if (a.sizes().equals(b.sizes())) {
    p.shape = &a;
  } else if (b.numel() == 1 && b.dim() <= a.dim()) {
    p.shape = &a;
    p.b_scalar = true;
  } else if (a.numel() == 1 && a.dim() <= b.dim()) {
    p.shape = &b;
    p.a_scalar = true;
  } else {
    return p;
  }
  if (p.shape->numel() > kMaxElems) return p;
  if ((!p.a_scalar && !a.is_contiguous()) || (!p.b_scalar && !b.is_contiguous())) return p;
  const c10::ScalarType ta = a.scalar_type(), tb = b.scalar_type();
  c10::ScalarType dt = c10::ScalarType::Undefined;
  if (ta == tb)
    dt = ta;
  else if (b.dim() == 0 && a.dim() > 0)
    dt = absorb(ta, tb);
  else if (a.dim() == 0 && b.dim() > 0)
    dt = absorb(tb, ta);
  if (!fastDtype(dt) || (op == BinOp::kDiv && dt == at::kLong)) return p;
  p.dtype = dt;
  p.ok = true;
  return p;
}

// The result dtype of (tensor `a`, Scalar `s`) on the fast path, or Undefined. A Scalar
// is a wrapped number: it never changes a tensor's dtype within its category.
inline c10::ScalarType scalarResultDtype(BinOp op, const at::Tensor& a, const Num& s) {
  const c10::ScalarType ta = a.scalar_type();
  if (s.kind == Num::kNone || !fastDtype(ta)) return c10::ScalarType::Undefined;
  if (ta == at::kLong && (s.kind == Num::kFloat || op == BinOp::kDiv)) return c10::ScalarType::Undefined;
  return ta;
}

// The single element of `t` (float32 / float64 / int64 / int32) converted to T.
template <class T>
inline T elementAs(const at::Tensor& t) {
  const void* p = t.const_data_ptr();
  switch (t.scalar_type()) {
    case at::kFloat:
      return static_cast<T>(*static_cast<const float*>(p));
    case at::kDouble:
      return static_cast<T>(*static_cast<const double*>(p));
    case at::kLong:
      return static_cast<T>(*static_cast<const int64_t*>(p));
    case at::kInt:
      return static_cast<T>(*static_cast<const int32_t*>(p));
    default:
      return T(0);  // not reached: planBinary admits these dtypes only
  }
}

template <class T>
inline T numAs(const Num& n) {
  return n.kind == Num::kInt ? static_cast<T>(n.i) : static_cast<T>(n.f);
}

// Whether the fast path reproduces ATen's add with this alpha for dtype T: always for
// alpha 1 and integers. Otherwise ATen's result depends on its loop: with a tensor
// `other` its AVX2 / AVX-512 kernels compute one fused multiply-add, fma(b, alpha, a)
// (the baseline build rounds the product separately); with a broadcast scalar `other`
// the scalar tail loop rounds alpha * b once, hoisted out of the loop, while the
// vector body uses fma, so which rounding an element gets depends on its position.
// The fast path only takes the first case (`b_broadcast` false).
template <class T>
inline bool alphaSupported(const BinarySpec& s, bool b_broadcast) {
  if (s.unit_alpha) return true;
  if constexpr (std::is_integral_v<T>) {
    return s.alpha.kind == Num::kInt;  // ATen rejects a float alpha for integer tensors
  } else {
    static const bool fma = [] {
      const std::string c = at::get_cpu_capability();  // "DEFAULT", "AVX2", "AVX512", ...
      return c.rfind("AVX", 0) == 0;
    }();
    return fma && !b_broadcast;
  }
}

template <class T>
struct Arith {
  // Integers wrap (ATen's int64 kernels do in practice; unsigned avoids the UB here).
  static T add(T a, T b, T alpha, bool unit) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(alpha) * static_cast<U>(b));
    } else {
      return unit ? a + b : std::fma(b, alpha, a);
    }
  }
  static T mul(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
  static T div(T a, T b) { return a / b; }
};

// z[i] = f(x[i], y[i]) with a scalar side read once before the loop (z may be x or y:
// in-place reuse).
template <class T, class F>
inline void loop(const T* x, bool xs, T xv, const T* y, bool ys, T yv, T* z, int64_t n, F f) {
  if (xs) {
    for (int64_t i = 0; i < n; ++i) z[i] = f(xv, y[i]);
  } else if (ys) {
    for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], yv);
  } else {
    for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], y[i]);
  }
}

template <class T>
inline void compute(const BinarySpec& s, const T* x, bool xs, T xv, const T* y, bool ys, T yv, T* z, int64_t n) {
  switch (s.op) {
    case BinOp::kAdd: {
      const T alpha = numAs<T>(s.alpha);
      const bool unit = s.unit_alpha;
      loop(x, xs, xv, y, ys, yv, z, n, [alpha, unit](T a, T b) { return Arith<T>::add(a, b, alpha, unit); });
      break;
    }
    case BinOp::kMul:
      loop(x, xs, xv, y, ys, yv, z, n, [](T a, T b) { return Arith<T>::mul(a, b); });
      break;
    case BinOp::kDiv:
      if constexpr (!std::is_integral_v<T>) loop(x, xs, xv, y, ys, yv, z, n, [](T a, T b) { return Arith<T>::div(a, b); });
      break;
    case BinOp::kNone:
      break;
  }
}

// The tensor the result goes into: input `reuse` (0: a, 1: b, -1: none) when it has the
// result's dtype and sizes (in-place reuse, core/graph/inplace_reuse.h), else the
// retained output 0 resized only when its sizes differ, else a fresh tensor. Stores it
// as output 0.
inline at::Tensor& target(KernelContext& ctx, int reuse, const at::Tensor& a, const at::Tensor* b, c10::ScalarType dt,
                          const at::Tensor& shape) {
  const at::Tensor* reusable = reuse == 0 ? &a : reuse == 1 ? b : nullptr;
  c10::IValue& slot = ctx.output(0);
  if (reuse >= 0) {
    if (reusable && reusable->scalar_type() == dt && reusable->sizes().equals(shape.sizes()) &&
        reusable->is_contiguous()) {
      if (!slot.isTensor() || !slot.toTensor().is_same(*reusable)) slot = *reusable;
      return slot.toTensor();
    }
  } else if (slot.isTensor()) {
    at::Tensor& o = slot.toTensor();
    // A retained output that is one of the inputs (a caller fed a result back) must
    // not be resized under the loop; it gets a fresh tensor instead.
    const bool input = o.is_same(a) || (b && o.is_same(*b));
    if (o.scalar_type() == dt && plainCpu(o) && !input) {
      if (!o.sizes().equals(shape.sizes())) at::native::resize_(o, shape.sizes(), c10::nullopt);
      if (o.is_contiguous()) return o;
    }
  }
  slot = at::empty(shape.sizes(), at::TensorOptions().dtype(dt));
  return slot.toTensor();
}

template <class T>
inline void runTyped(KernelContext& ctx, const BinarySpec& s, const Plan& p, const at::Tensor& a, const at::Tensor& b,
                     int reuse) {
  const T xv = p.a_scalar ? elementAs<T>(a) : T(0);
  const T yv = p.b_scalar ? elementAs<T>(b) : T(0);
  at::Tensor& o = target(ctx, reuse, a, &b, p.dtype, *p.shape);
  compute<T>(s, p.a_scalar ? nullptr : a.const_data_ptr<T>(), p.a_scalar, xv, p.b_scalar ? nullptr : b.const_data_ptr<T>(),
             p.b_scalar, yv, o.mutable_data_ptr<T>(), o.numel());
}

// (Tensor, Tensor): true when the fast path wrote output 0.
inline bool tryTensors(KernelContext& ctx, const BinarySpec& s, const at::Tensor& a, const at::Tensor& b, int reuse) {
  const Plan p = planBinary(s.op, a, b);
  if (!p.ok) return false;
  switch (p.dtype) {
    case at::kFloat:
      if (!alphaSupported<float>(s, p.b_scalar)) return false;
      runTyped<float>(ctx, s, p, a, b, reuse);
      return true;
    case at::kDouble:
      if (!alphaSupported<double>(s, p.b_scalar)) return false;
      runTyped<double>(ctx, s, p, a, b, reuse);
      return true;
    case at::kLong:
      if (!alphaSupported<int64_t>(s, p.b_scalar)) return false;
      runTyped<int64_t>(ctx, s, p, a, b, reuse);
      return true;
    default:
      return false;
  }
}

template <class T>
inline void runScalarTyped(KernelContext& ctx, const BinarySpec& s, const at::Tensor& a, const Num& v, int reuse) {
  const T yv = numAs<T>(v);
  at::Tensor& o = target(ctx, reuse, a, nullptr, a.scalar_type(), a);
  compute<T>(s, a.const_data_ptr<T>(), false, T(0), nullptr, true, yv, o.mutable_data_ptr<T>(), o.numel());
}

// (Tensor, Scalar): true when the fast path wrote output 0.
inline bool tryScalar(KernelContext& ctx, const BinarySpec& s, const at::Tensor& a, const Num& v, int reuse) {
  if (!plainCpu(a) || a.numel() > kMaxElems || !a.is_contiguous()) return false;
  switch (scalarResultDtype(s.op, a, v)) {
    case at::kFloat:
      if (!alphaSupported<float>(s, true)) return false;
      runScalarTyped<float>(ctx, s, a, v, reuse);
      return true;
    case at::kDouble:
      if (!alphaSupported<double>(s, true)) return false;
      runScalarTyped<double>(ctx, s, a, v, reuse);
      return true;
    case at::kLong:
      if (!alphaSupported<int64_t>(s, true)) return false;
      runScalarTyped<int64_t>(ctx, s, a, v, reuse);
      return true;
    default:
      return false;
  }
}

}  // namespace brisk::ops_cpu::out::small
