#pragma once
// A Scalar argument as the small-tensor fast path (small_binary.h) reads it: an int or a
// float value, without building a c10::Scalar or a wrapped-number tensor per call.
// Bool and complex Scalars are kNone: the fast path leaves them to ATen.
#include <ATen/core/ivalue.h>
#include <c10/core/Scalar.h>

#include <cstdint>

namespace brisk::ops_cpu::out::small {

struct Num {
  enum Kind : uint8_t { kNone, kInt, kFloat };
  Kind kind = kNone;
  int64_t i = 0;   // kInt
  double f = 0.0;  // kFloat

  static Num of(const c10::Scalar& s) {
    Num n;
    if (s.isFloatingPoint()) {
      n.kind = kFloat;
      n.f = s.toDouble();
    } else if (s.isIntegral(/*includeBool=*/false)) {
      n.kind = kInt;
      n.i = s.toLong();
    }
    return n;
  }
  // A Scalar slot read at run time (the IValue holds a double or an int for the
  // schemas' Scalar arguments the frontends produce).
  static Num of(const c10::IValue& v) {
    Num n;
    if (v.isDouble()) {
      n.kind = kFloat;
      n.f = v.toDouble();
    } else if (v.isInt()) {
      n.kind = kInt;
      n.i = v.toInt();
    }
    return n;
  }
};

}  // namespace brisk::ops_cpu::out::small
