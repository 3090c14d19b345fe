// Scalar (int / float / bool / str) arithmetic, comparisons and conversions, with the
// interpreter's exact semantics (Python floor division, int/int true division, ...).
#include <ATen/ScalarOps.h>
#include <ATen/core/Tensor.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

#include "ops_cpu/native/common.h"

namespace brisk::ops_cpu::native {
namespace {

template <typename F>
void reg(PluginRegistrar& r, const char* key, F f) {
  r.native(key, [f, key](KernelBuildContext&) { return lambda(f, key); });
}

template <typename A, typename B, typename F>
void binary(PluginRegistrar& r, const char* key, F f) {
  reg(r, key, [f](KernelContext& ctx) { ctx.output(0) = f(ctx.input(0).to<A>(), ctx.input(1).to<B>()); });
}

template <typename A, typename F>
void unary(PluginRegistrar& r, const char* key, F f) {
  reg(r, key, [f](KernelContext& ctx) { ctx.output(0) = f(ctx.input(0).to<A>()); });
}

// The four int/float combinations of a binary op: "<name>.int", ".float",
// ".int_float", ".float_int".
#define BRISK_NUM_OVERLOADS(r, name, expr)                                                    \
  binary<int64_t, int64_t>(r, name ".int", [](int64_t a, int64_t b) { return expr; });      \
  binary<double, double>(r, name ".float", [](double a, double b) { return expr; });         \
  binary<int64_t, double>(r, name ".int_float", [](int64_t a, double b) { return expr; });  \
  binary<double, int64_t>(r, name ".float_int", [](double a, int64_t b) { return expr; })

int64_t floordiv(int64_t a, int64_t b) {
  if (b == 0) throw std::runtime_error("division by 0");
  if ((a > 0) == (b > 0)) return a / b;
  // Python rounds down; C++ truncates.
  auto r = std::lldiv(a, b);
  return r.rem ? r.quot - 1 : r.quot;
}

// The interpreter's remainder: (b + a % b) % b, so the result takes b's sign as in
// Python; fmod for floats. An int remainder by 0 raises instead of trapping.
int64_t remainderInt(int64_t a, int64_t b) {
  if (b == 0) throw std::runtime_error("ZeroDivisionError: integer division or modulo by zero");
  return (b + a % b) % b;
}
double remainderFloat(double a, double b) { return std::fmod(b + std::fmod(a, b), b); }

// checkImplicitTensorToNum of the interpreter.
void checkImplicitTensorToNum(const at::Tensor& t, bool to_int) {
  if (t.requires_grad()) throw std::runtime_error("Cannot input a tensor that requires grad as a scalar argument");
  if (!t.sizes().empty())
    throw std::runtime_error("Cannot input a tensor of dimension other than 0 as a scalar argument");
  if (to_int && !c10::isIntegralType(t.scalar_type(), /*includeBool=*/false)) {
    std::stringstream ss;
    ss << "Cannot input a tensor of type " << t.scalar_type() << " as an integral argument";
    throw std::runtime_error(ss.str());
  }
}

// The interpreter's stringFindImpl (aten::find), forward search only.
int64_t stringFind(std::string string, const std::string& substr, int64_t start, int64_t end) {
  const int64_t size = static_cast<int64_t>(string.size());
  if (start < 0) start = std::max(int64_t(0), int64_t(size + start));
  if (end < 0) end = std::max(int64_t(0), int64_t(size + end + 1));
  if (end > start)
    string = string.substr(start, end - start);
  else
    string = "";
  int64_t result = -1;
  if (string.size() >= substr.size()) {
    auto pos = string.find(substr, 0);
    if (pos != std::string::npos) result = static_cast<int64_t>(pos) + start;
  }
  return result;
}

// Arithmetic.
void registerArithmetic(PluginRegistrar& r) {
  BRISK_NUM_OVERLOADS(r, "aten::add", a + b);
  BRISK_NUM_OVERLOADS(r, "aten::sub", a - b);
  BRISK_NUM_OVERLOADS(r, "aten::mul", a * b);
  binary<int64_t, int64_t>(r, "aten::floordiv.int", [](int64_t a, int64_t b) { return floordiv(a, b); });
  binary<double, double>(r, "aten::floordiv.float", [](double a, double b) { return std::floor(a / b); });
  binary<int64_t, double>(r, "aten::floordiv.int_float", [](int64_t a, double b) { return std::floor(a / b); });
  binary<double, int64_t>(r, "aten::floordiv.float_int", [](double a, int64_t b) { return std::floor(a / b); });
  binary<int64_t, int64_t>(r, "aten::div.int",
                           [](int64_t a, int64_t b) { return static_cast<double>(a) / static_cast<double>(b); });
  binary<double, double>(r, "aten::div.float", [](double a, double b) { return a / b; });
  unary<int64_t>(r, "aten::neg.int", [](int64_t a) { return -a; });
  unary<double>(r, "aten::neg.float", [](double a) { return -a; });
  unary<int64_t>(r, "aten::sqrt.int", [](int64_t a) { return std::sqrt(static_cast<double>(a)); });
  unary<double>(r, "aten::sqrt.float", [](double a) { return std::sqrt(a); });
  binary<int64_t, int64_t>(r, "aten::remainder.int", remainderInt);
  binary<double, double>(r, "aten::remainder.float", remainderFloat);
  binary<int64_t, double>(r, "aten::remainder.int_float",
                          [](int64_t a, double b) { return remainderFloat(static_cast<double>(a), b); });
  binary<double, int64_t>(r, "aten::remainder.float_int",
                          [](double a, int64_t b) { return remainderFloat(a, static_cast<double>(b)); });
  // pow with a float operand returns a float (NaN for a negative base and a fractional
  // exponent, as std::pow and the interpreter give); Swin's attention scale.
  binary<int64_t, double>(r, "aten::pow.int_float",
                          [](int64_t a, double b) { return std::pow(static_cast<double>(a), b); });
  binary<double, double>(r, "aten::pow.float", [](double a, double b) { return std::pow(a, b); });
  binary<double, int64_t>(r, "aten::pow.float_int",
                          [](double a, int64_t b) { return std::pow(a, static_cast<double>(b)); });
  BRISK_NUM_OVERLOADS(r, "prim::min", a < b ? a : b);
  BRISK_NUM_OVERLOADS(r, "prim::max", a > b ? a : b);
}

// Comparisons and booleans.
void registerComparisons(PluginRegistrar& r) {
  BRISK_NUM_OVERLOADS(r, "aten::eq", a == b);
  BRISK_NUM_OVERLOADS(r, "aten::ne", a != b);
  BRISK_NUM_OVERLOADS(r, "aten::lt", a < b);
  BRISK_NUM_OVERLOADS(r, "aten::le", a <= b);
  BRISK_NUM_OVERLOADS(r, "aten::gt", a > b);
  BRISK_NUM_OVERLOADS(r, "aten::ge", a >= b);
  binary<bool, bool>(r, "aten::eq.bool", [](bool a, bool b) { return a == b; });
  binary<bool, bool>(r, "aten::ne.bool", [](bool a, bool b) { return a != b; });

  unary<bool>(r, "aten::__not__", [](bool a) { return !a; });
  binary<bool, bool>(r, "aten::__and__.bool", [](bool a, bool b) { return a && b; });
  binary<bool, bool>(r, "aten::__or__.bool", [](bool a, bool b) { return a || b; });
  binary<bool, bool>(r, "aten::__xor__.bool", [](bool a, bool b) { return a != b; });
}

// Strings (cheap ones only; formatting stays with the interpreter's ops), range()
// helpers and identity.
void registerStrings(PluginRegistrar& r) {
  reg(r, "aten::add.str",
      [](KernelContext& ctx) { ctx.output(0) = ctx.input(0).toStringRef() + ctx.input(1).toStringRef(); });
  reg(r, "aten::len.str",
      [](KernelContext& ctx) { ctx.output(0) = static_cast<int64_t>(ctx.input(0).toStringRef().size()); });
  reg(r, "aten::eq.str",
      [](KernelContext& ctx) { ctx.output(0) = ctx.input(0).toStringRef() == ctx.input(1).toStringRef(); });
  reg(r, "aten::ne.str",
      [](KernelContext& ctx) { ctx.output(0) = ctx.input(0).toStringRef() != ctx.input(1).toStringRef(); });

  reg(r, "aten::find", [](KernelContext& ctx) {
    ctx.output(0) = stringFind(ctx.input(0).toStringRef(), ctx.input(1).toStringRef(), ctx.input(2).toInt(),
                               ctx.input(3).toInt());
  });
  // str(x): the interpreter prints the IValue with the same operator<<.
  reg(r, "aten::str", [](KernelContext& ctx) {
    std::stringstream ss;
    ss << ctx.input(0);
    ctx.output(0) = ss.str();
  });

  // range() helpers.
  reg(r, "aten::__range_length", [](KernelContext& ctx) {
    const int64_t lo = ctx.input(0).toInt(), hi = ctx.input(1).toInt(), step = ctx.input(2).toInt();
    if (step == 0) throw std::runtime_error("range() arg 3 must not be zero");
    int64_t n = 0;
    if (step > 0 && lo < hi)
      n = 1 + (hi - 1 - lo) / step;
    else if (step < 0 && lo > hi)
      n = 1 + (lo - 1 - hi) / (0 - step);
    ctx.output(0) = n;
  });
  reg(r, "aten::__derive_index", [](KernelContext& ctx) {
    ctx.output(0) = ctx.input(1).toInt() + ctx.input(0).toInt() * ctx.input(2).toInt();
  });

  // Identity.
  reg(r, "aten::__is__", [](KernelContext& ctx) { ctx.output(0) = ctx.input(0).is(ctx.input(1)); });
  reg(r, "aten::__isnot__", [](KernelContext& ctx) { ctx.output(0) = !ctx.input(0).is(ctx.input(1)); });
  reg(r, "prim::Uninitialized", [](KernelContext& ctx) { ctx.output(0) = c10::IValue::uninitialized(); });
}

// Conversions between tensors and numbers.
void registerConversions(PluginRegistrar& r) {
  reg(r, "aten::Int.Tensor", [](KernelContext& ctx) { ctx.output(0) = ctx.tensor(0).item<int64_t>(); });
  reg(r, "aten::Int.float",
      [](KernelContext& ctx) { ctx.output(0) = static_cast<int64_t>(ctx.input(0).toDouble()); });
  reg(r, "aten::Int.bool", [](KernelContext& ctx) { ctx.output(0) = static_cast<int64_t>(ctx.input(0).toBool()); });
  reg(r, "aten::Int.Scalar", [](KernelContext& ctx) {
    const c10::IValue& s = ctx.input(0);
    ctx.output(0) = s.isInt() ? s.toInt() : static_cast<int64_t>(s.toScalar().toInt());
  });
  reg(r, "aten::Float.Tensor", [](KernelContext& ctx) { ctx.output(0) = ctx.tensor(0).item<double>(); });
  reg(r, "aten::Float.Scalar", [](KernelContext& ctx) {
    const c10::IValue& s = ctx.input(0);
    if (s.isDouble())
      ctx.output(0) = s.toDouble();
    else if (s.isComplexDouble())
      ctx.output(0) = s.toComplexDouble().real();
    else
      ctx.output(0) = static_cast<double>(s.toInt());
  });
  reg(r, "aten::Float.int", [](KernelContext& ctx) { ctx.output(0) = static_cast<double>(ctx.input(0).toInt()); });
  reg(r, "aten::Float.bool", [](KernelContext& ctx) { ctx.output(0) = static_cast<double>(ctx.input(0).toBool()); });
  reg(r, "aten::Bool.Tensor", [](KernelContext& ctx) { ctx.output(0) = ctx.tensor(0).is_nonzero(); });
  reg(r, "aten::Bool.int", [](KernelContext& ctx) { ctx.output(0) = static_cast<bool>(ctx.input(0).toInt()); });
  reg(r, "aten::Bool.float",
      [](KernelContext& ctx) { ctx.output(0) = static_cast<bool>(ctx.input(0).toDouble()); });
  reg(r, "aten::IntImplicit", [](KernelContext& ctx) {
    const at::Tensor& t = ctx.tensor(0);
    checkImplicitTensorToNum(t, true);
    ctx.output(0) = t.item<int64_t>();
  });
  reg(r, "aten::FloatImplicit", [](KernelContext& ctx) {
    const at::Tensor& t = ctx.tensor(0);
    checkImplicitTensorToNum(t, false);
    ctx.output(0) = t.item<double>();
  });
  reg(r, "aten::ScalarImplicit", [](KernelContext& ctx) {
    const at::Tensor& t = ctx.tensor(0);
    checkImplicitTensorToNum(t, false);
    ctx.output(0) = t.item();
  });
  reg(r, "prim::NumToTensor.Scalar",
      [](KernelContext& ctx) { ctx.output(0) = c10::scalar_to_tensor(ctx.input(0).toScalar()); });
  reg(r, "prim::NumToTensor.bool",
      [](KernelContext& ctx) { ctx.output(0) = c10::scalar_to_tensor(at::Scalar(ctx.input(0).toBool())); });
}

}  // namespace

void registerScalarKernels(PluginRegistrar& r) {
  registerArithmetic(r);
  registerComparisons(r);
  registerStrings(r);
  registerConversions(r);
}

}  // namespace brisk::ops_cpu::native
