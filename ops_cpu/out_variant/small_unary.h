#pragma once
// Small-tensor fast path of unary elementwise ops (activations.cc, elementwise.cc's neg):
// a direct loop instead of ATen's TensorIterator set-up, which costs ~0.5 us per call
// against a few ns of arithmetic on a handful of elements. Conditions and the output
// target are those of small_binary.h; the element bounds differ per op:
//  * neg: exact, any n up to small::kMaxElems;
//  * clamp, sigmoid: ATen runs its scalar code (std::min / std::max, std::exp, the
//    formulas below) only on the tail of its vectorized loop, shorter
//    than two vectors (8 doubles, 16 floats with AVX2); the vector body differs (another
//    exp approximation; max_ps returns its second operand for -0.0 vs +0.0
//    where std::max returns its first). Up to kMaxScalarTail elements every element is
//    a tail element on every ATen build, so the loop reproduces its bits.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/kernels/kernel.h"
#include "ops_cpu/out_variant/small_binary.h"

namespace brisk::ops_cpu::out::small {

constexpr int64_t kMaxScalarTail = 7;

// No tanh: ATen computes float tanh through its vml layer, whose partial-vector tail
// uses the vectorized approximation too, so no element count gives std::tanh's bits
// (checked: 7-element tensors differed).
enum class UnOp : uint8_t { kNone, kNeg, kClamp, kSigmoid };

struct UnarySpec {
  UnOp op = UnOp::kNone;
  // kClamp: the bounds (fixed at load; a missing bound is -inf / +inf, a NaN bound is
  // left to ATen, which fills the result with NaN).
  double lo = -INFINITY;
  double hi = INFINITY;
};

// The spec of clamp(lo, hi) with constant bounds (kNone when a bound is NaN, or an
// integer beyond 2^53 whose conversion through double could round twice).
inline UnarySpec clampSpec(const c10::optional<c10::Scalar>& lo, const c10::optional<c10::Scalar>& hi) {
  UnarySpec s;
  auto bound = [](const c10::Scalar& v, double& out) {
    if (v.isIntegral(false)) {
      const int64_t i = v.toLong();
      if (i > (int64_t{1} << 53) || i < -(int64_t{1} << 53)) return false;
      out = static_cast<double>(i);
      return true;
    }
    if (!v.isFloatingPoint()) return false;
    out = v.toDouble();
    return !std::isnan(out);
  };
  if (lo && !bound(*lo, s.lo)) return s;
  if (hi && !bound(*hi, s.hi)) return s;
  s.op = UnOp::kClamp;
  return s;
}

template <class T>
struct UnaryArith {
  static T neg(T a) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));
    } else {
      return -a;
    }
  }
  // ATen's clamp: std::min(std::max(a, lo), hi); NaN passes through.
  static T clamp(T a, T lo, T hi) { return std::min(std::max(a, lo), hi); }
  static T sigmoid(T a) { return static_cast<T>(1) / (static_cast<T>(1) + std::exp(-a)); }
};

inline bool unaryDtypeOk(UnOp op, c10::ScalarType t) {
  switch (op) {
    case UnOp::kNeg:
      return fastDtype(t);
    case UnOp::kClamp:
    case UnOp::kSigmoid:
      return t == at::kFloat || t == at::kDouble;
    case UnOp::kNone:
      break;
  }
  return false;
}

inline int64_t unaryMaxElems(UnOp op) {
  return op == UnOp::kNeg ? kMaxElems : kMaxScalarTail;
}

// True when the fast path takes x for this op (tests check the decision directly).
inline bool unaryApplies(const UnarySpec& s, const at::Tensor& x) {
  return s.op != UnOp::kNone && plainCpu(x) && unaryDtypeOk(s.op, x.scalar_type()) &&
         x.numel() <= unaryMaxElems(s.op) && x.is_contiguous();
}

template <class T>
inline void unaryLoop(const UnarySpec& s, const T* x, T* z, int64_t n) {
  switch (s.op) {
    case UnOp::kNeg:
      for (int64_t i = 0; i < n; ++i) z[i] = UnaryArith<T>::neg(x[i]);
      break;
    case UnOp::kClamp:
      if constexpr (!std::is_integral_v<T>) {
        const T lo = static_cast<T>(s.lo), hi = static_cast<T>(s.hi);
        for (int64_t i = 0; i < n; ++i) z[i] = UnaryArith<T>::clamp(x[i], lo, hi);
      }
      break;
    case UnOp::kSigmoid:
      if constexpr (!std::is_integral_v<T>)
        for (int64_t i = 0; i < n; ++i) z[i] = UnaryArith<T>::sigmoid(x[i]);
      break;
    case UnOp::kNone:
      break;
  }
}

// True when the fast path wrote output 0 (into x itself when reuse == 0).
inline bool tryUnary(KernelContext& ctx, const UnarySpec& s, const at::Tensor& x, int reuse) {
  if (!unaryApplies(s, x)) return false;
  at::Tensor& o = target(ctx, reuse, x, nullptr, x.scalar_type(), x);
  const int64_t n = o.numel();
  switch (x.scalar_type()) {
    case at::kFloat:
      unaryLoop<float>(s, x.const_data_ptr<float>(), o.mutable_data_ptr<float>(), n);
      break;
    case at::kDouble:
      unaryLoop<double>(s, x.const_data_ptr<double>(), o.mutable_data_ptr<double>(), n);
      break;
    case at::kLong:
      unaryLoop<int64_t>(s, x.const_data_ptr<int64_t>(), o.mutable_data_ptr<int64_t>(), n);
      break;
    default:
      break;
  }
  return true;
}

}  // namespace brisk::ops_cpu::out::small
