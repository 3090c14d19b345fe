// ops_cpu native scalar kernels (int/float/bool/str arithmetic, comparisons,
// conversions) against the interpreter: one test instance per op key.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kNative = KernelKind::kNative;

c10::IValue I(int64_t v) { return c10::IValue(v); }
c10::IValue F(double v) { return c10::IValue(v); }
c10::IValue B(bool v) { return c10::IValue(v); }

std::vector<c10::IValue> valuesOf(const std::string& type, int which) {
  if (type == "int") {
    static const int64_t a[] = {7, -7, 0, 9, -8}, b[] = {2, 3, -2, -4, -8};
    return {I(a[which]), I(b[which])};
  }
  if (type == "float") {
    static const double a[] = {7.5, -7.25, 0.0, 3.0, -1.5}, b[] = {2.0, 3.5, -2.0, 3.0, -1.5};
    return {F(a[which]), F(b[which])};
  }
  static const bool a[] = {true, false, true, false, true}, b[] = {true, true, false, false, true};
  return {B(a[which]), B(b[which])};
}

struct BinaryCase {
  std::string op;        // "aten::add"
  std::string overload;  // "int"
  std::string ta, tb, tr;
};

std::ostream& operator<<(std::ostream& os, const BinaryCase& c) { return os << c.op << "." << c.overload; }

class NativeScalarBinary : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(NativeScalarBinary, MatchesInterpreter) {
  const BinaryCase& c = GetParam();
  const std::string ir = "graph(%a : " + c.ta + ", %b : " + c.tb + "):\n  %c : " + c.tr + " = " + c.op +
                         "(%a, %b)\n  return (%c)";
  OpTester t(ir);
  for (int i = 0; i < 5; ++i) {
    std::vector<c10::IValue> a = valuesOf(c.ta, i), b = valuesOf(c.tb, i);
    t.inputs({a[0], b[1]});
  }
  t.expectKernel(c.op + "." + c.overload, kNative).run();
}

std::vector<BinaryCase> binaryCases() {
  std::vector<BinaryCase> out;
  struct Op {
    const char* name;
    const char* int_ret;    // result type of int,int
    const char* float_ret;  // result type when a float is involved
  };
  const Op numeric[] = {{"aten::add", "int", "float"}, {"aten::sub", "int", "float"}, {"aten::mul", "int", "float"},
                        {"aten::floordiv", "int", "float"}, {"prim::min", "int", "float"},
                        {"prim::max", "int", "float"}, {"aten::remainder", "int", "float"},
                        {"aten::eq", "bool", "bool"}, {"aten::ne", "bool", "bool"},
                        {"aten::lt", "bool", "bool"}, {"aten::le", "bool", "bool"}, {"aten::gt", "bool", "bool"},
                        {"aten::ge", "bool", "bool"}};
  for (const Op& o : numeric) {
    out.push_back({o.name, "int", "int", "int", o.int_ret});
    out.push_back({o.name, "float", "float", "float", o.float_ret});
    out.push_back({o.name, "int_float", "int", "float", o.float_ret});
    out.push_back({o.name, "float_int", "float", "int", o.float_ret});
  }
  out.push_back({"aten::div", "int", "int", "int", "float"});
  out.push_back({"aten::div", "float", "float", "float", "float"});
  out.push_back({"aten::eq", "bool", "bool", "bool", "bool"});
  out.push_back({"aten::ne", "bool", "bool", "bool", "bool"});
  out.push_back({"aten::__and__", "bool", "bool", "bool", "bool"});
  out.push_back({"aten::__or__", "bool", "bool", "bool", "bool"});
  out.push_back({"aten::__xor__", "bool", "bool", "bool", "bool"});
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, NativeScalarBinary, ::testing::ValuesIn(binaryCases()),
                         [](const ::testing::TestParamInfo<BinaryCase>& info) {
                           std::string n = info.param.op.substr(6) + "_" + info.param.overload;
                           for (char& ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(NativeScalars, FloordivIntRoundsDown) {
  OpTester("graph(%a : int, %b : int):\n  %c : int = aten::floordiv(%a, %b)\n  return (%c)")
      .inputs({I(-7), I(2)})
      .inputs({I(7), I(-2)})
      .inputs({I(-8), I(-3)})
      .inputs({I(0), I(-3)})
      .expectKernel("aten::floordiv.int", kNative)
      .run();
}

// pow with a float operand (a float result); values chosen so that no result is NaN.
TEST(NativeScalars, PowWithFloat) {
  OpTester(R"IR(
graph(%a : int, %b : int, %f : float, %e : float):
  %p1 : float = aten::pow(%a, %e)
  %p2 : float = aten::pow(%f, %e)
  %p3 : float = aten::pow(%f, %b)
  %out : (float, float, float) = prim::TupleConstruct(%p1, %p2, %p3)
  return (%out))IR")
      .inputs({I(7), I(3), F(2.5), F(0.5)})
      .inputs({I(-7), I(3), F(-1.5), F(2.0)})
      .inputs({I(7), I(-3), F(0.75), F(-1.0)})
      .expectKernel("aten::pow.int_float", kNative)
      .expectKernel("aten::pow.float", kNative)
      .expectKernel("aten::pow.float_int", kNative)
      .run();
}

TEST(NativeScalars, NegAndSqrt) {
  OpTester(R"IR(
graph(%a : int, %b : float):
  %c : int = aten::neg(%a)
  %d : float = aten::neg(%b)
  %e : float = aten::sqrt(%a)
  %f : float = aten::sqrt(%b)
  %out : (int, float, float, float) = prim::TupleConstruct(%c, %d, %e, %f)
  return (%out))IR")
      .inputs({I(9), F(2.25)})
      .inputs({I(2), F(7.0)})
      .expectKernel("aten::neg.int", kNative)
      .expectKernel("aten::neg.float", kNative)
      .expectKernel("aten::sqrt.int", kNative)
      .expectKernel("aten::sqrt.float", kNative)
      .run();
}

TEST(NativeScalars, Not) {
  OpTester("graph(%a : bool):\n  %c : bool = aten::__not__(%a)\n  return (%c)")
      .inputs({B(true)})
      .inputs({B(false)})
      .expectKernel("aten::__not__", kNative)
      .run();
}

TEST(NativeScalars, Strings) {
  OpTester(R"IR(
graph(%a : str, %b : str):
  %c : str = aten::add(%a, %b)
  %d : int = aten::len(%c)
  %e : bool = aten::eq(%a, %b)
  %f : bool = aten::ne(%a, %b)
  %out : (str, int, bool, bool) = prim::TupleConstruct(%c, %d, %e, %f)
  return (%out))IR")
      .inputs({c10::IValue(std::string("ab")), c10::IValue(std::string("cde"))})
      .inputs({c10::IValue(std::string("xy")), c10::IValue(std::string("xy"))})
      .expectKernel("aten::add.str", kNative)
      .expectKernel("aten::len.str", kNative)
      .expectKernel("aten::eq.str", kNative)
      .expectKernel("aten::ne.str", kNative)
      .run();
}

TEST(NativeScalars, FindAndStr) {
  OpTester(R"IR(
graph(%x : Tensor, %i : int, %f : float, %sub : str, %start : int, %end : int):
  %d : Device = prim::device(%x)
  %ds : str = aten::str(%d)
  %istr : str = aten::str(%i)
  %fs : str = aten::str(%f)
  %a : str = aten::add(%ds, %istr)
  %b : str = aten::add(%a, %fs)
  %k : int = aten::find(%b, %sub, %start, %end)
  %out : (str, int) = prim::TupleConstruct(%b, %k)
  return (%out))IR")
      .inputs({at::randn({2}), I(42), F(1.5), c10::IValue(std::string("cpu")), I(0), I(-1)})
      .inputs({at::randn({3}), I(-7), F(2.0), c10::IValue(std::string("7")), I(-4), I(-1)})
      .inputs({at::randn({3}), I(123), F(-0.25), c10::IValue(std::string("2")), I(2), I(5)})
      .inputs({at::randn({3}), I(5), F(0.5), c10::IValue(std::string("x")), I(6), I(2)})
      .inputs({at::randn({3}), I(5), F(0.5), c10::IValue(std::string("")), I(3), I(-1)})
      .expectKernel("aten::str", kNative)
      .expectKernel("aten::find", kNative)
      .run();
}

TEST(NativeScalars, RangeHelpers) {
  OpTester(R"IR(
graph(%lo : int, %hi : int, %step : int):
  %n : int = aten::__range_length(%lo, %hi, %step)
  %i : int = aten::__derive_index(%n, %lo, %step)
  %out : (int, int) = prim::TupleConstruct(%n, %i)
  return (%out))IR")
      .inputs({I(0), I(10), I(3)})
      .inputs({I(10), I(-3), I(-4)})
      .inputs({I(5), I(5), I(1)})
      .inputs({I(5), I(1), I(2)})
      .expectKernel("aten::__range_length", kNative)
      .expectKernel("aten::__derive_index", kNative)
      .run();
}

TEST(NativeScalars, IsAndIsNot) {
  OpTester(R"IR(
graph(%x : Tensor, %y : Tensor?):
  %none : NoneType = prim::Constant()
  %a : bool = aten::__is__(%y, %none)
  %b : bool = aten::__isnot__(%y, %none)
  %c : bool = aten::__is__(%x, %x)
  %out : (bool, bool, bool) = prim::TupleConstruct(%a, %b, %c)
  return (%out))IR")
      .inputs({at::randn({2}), c10::IValue()})
      .inputs({at::randn({3}), at::randn({3})})
      .expectKernel("aten::__is__", kNative)
      .expectKernel("aten::__isnot__", kNative)
      .run();
}

TEST(NativeScalars, TensorToNumber) {
  OpTester(R"IR(
graph(%i : Tensor, %f : Tensor):
  %a : int = aten::Int(%i)
  %b : float = aten::Float(%f)
  %c : bool = aten::Bool(%f)
  %d : int = aten::IntImplicit(%i)
  %e : float = aten::FloatImplicit(%f)
  %g : Scalar = aten::ScalarImplicit(%f)
  %h : Scalar = aten::ScalarImplicit(%i)
  %out : (int, float, bool, int, float, Scalar, Scalar) = prim::TupleConstruct(%a, %b, %c, %d, %e, %g, %h)
  return (%out))IR")
      .inputs({at::scalar_tensor(5, at::kLong), at::scalar_tensor(2.5)})
      .inputs({at::scalar_tensor(-3, at::kLong), at::scalar_tensor(0.0)})
      .expectKernel("aten::Int.Tensor", kNative)
      .expectKernel("aten::Float.Tensor", kNative)
      .expectKernel("aten::Bool.Tensor", kNative)
      .expectKernel("aten::IntImplicit", kNative)
      .expectKernel("aten::FloatImplicit", kNative)
      .expectKernel("aten::ScalarImplicit", kNative)
      .run();
}

TEST(NativeScalars, NumberConversions) {
  OpTester(R"IR(
graph(%i : int, %f : float, %b : bool, %s : Scalar):
  %a : int = aten::Int(%f)
  %c : int = aten::Int(%b)
  %d : int = aten::Int(%s)
  %e : float = aten::Float(%i)
  %g : float = aten::Float(%b)
  %h : float = aten::Float(%s)
  %k : bool = aten::Bool(%i)
  %l : bool = aten::Bool(%f)
  %out : (int, int, int, float, float, float, bool, bool) = prim::TupleConstruct(%a, %c, %d, %e, %g, %h, %k, %l)
  return (%out))IR")
      .inputs({I(3), F(-2.75), B(true), I(7)})
      .inputs({I(0), F(9.5), B(false), F(-4.5)})
      .expectKernel("aten::Int.float", kNative)
      .expectKernel("aten::Int.bool", kNative)
      .expectKernel("aten::Int.Scalar", kNative)
      .expectKernel("aten::Float.bool", kNative)
      .expectKernel("aten::Float.Scalar", kNative)
      .expectKernel("aten::Bool.int", kNative)
      .expectKernel("aten::Bool.float", kNative)
      .run();
}

TEST(NativeScalars, NumToTensor) {
  OpTester(R"IR(
graph(%i : int, %f : float, %b : bool):
  %a : Tensor = prim::NumToTensor(%i)
  %c : Tensor = prim::NumToTensor(%f)
  %d : Tensor = prim::NumToTensor(%b)
  %out : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %c, %d)
  return (%out))IR")
      .inputs({I(3), F(-2.75), B(true)})
      .inputs({I(-9), F(1e10), B(false)})
      .expectKernel("prim::NumToTensor.Scalar", kNative)
      .expectKernel("prim::NumToTensor.bool", kNative)
      .run();
}

}  // namespace
}  // namespace brisk::testing
