// Pointwise math kernels (ops_cpu/out_variant/math_ops.cc) and new_zeros
// (ops_cpu/out_variant/new_zeros.cc) against the interpreter. The kernels call the
// ops' own at::cpu kernels, so results are compared bit for bit; dtypes the out path
// leaves to the dispatcher (bool abs, float bitwise ops) must still give ATen's result
// or error.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/executor/module.h"
#include "tests/ops/op_groups.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;
const Tolerance kExact{0, 0, 0};

std::string unaryIR(const std::string& op) {
  return "graph(%x : Tensor):\n  %y : Tensor = aten::" + op + "(%x)\n  return (%y)\n";
}

std::string binaryIR(const std::string& op) {
  return "graph(%x : Tensor, %y : Tensor):\n  %z : Tensor = aten::" + op + "(%x, %y)\n  return (%z)\n";
}

// The exact comparison and the expected out-variant kernel `key`, per input group.
std::function<void(OpTester&)> exactOut(const std::string& key) {
  return [key](OpTester& t) { t.tolerance(kExact).expectKernel(key, kOut); };
}

// exp / sin / cos: floats (contiguous, transposed, double), special values, integers
// and bools (which produce the default float dtype).
TEST(OutMath, ExpSinCos) {
  const at::Tensor special = at::tensor({0.0f, -0.0f, INFINITY, -INFINITY, NAN, 88.7f, -104.0f, 1e-30f});
  for (const char* op : {"exp", "sin", "cos"}) {
    SCOPED_TRACE(op);
    runGroups(unaryIR(op),
              {{{at::randn({17, 33}).t()}, {at::randn({3, 5})}},
               {{special}, {at::randn({3})}},
               {{at::randn({4, 3}, at::kDouble)}, {at::randn({2, 3}, at::kDouble)}},
               {{at::randint(-5, 5, {4, 6}, at::kInt)}, {at::randint(-5, 5, {2, 2}, at::kInt)}},
               {{at::rand({3, 2}) > 0.5}},
               {{at::randint(0, 9, {7}, at::kByte)}}},
              exactOut(std::string("aten::") + op));
  }
}

// abs: floats (-0.0, NaN), integers including the minimum int8; bool is ATen's error.
TEST(OutMath, Abs) {
  runGroups(unaryIR("abs"),
            {{{at::randn({6, 5}).t()}, {at::randn({4, 9})}, {at::randn({2, 2})}},
             {{at::tensor({-0.0f, NAN, -INFINITY, 3.0f})}},
             {{at::randint(-100, 100, {5, 5}, at::kLong)}},
             {{at::tensor({-128, -1, 0, 127}, at::kChar)}}},
            exactOut("aten::abs"));
  auto m = Module::fromIR(unaryIR("abs"));
  EXPECT_ANY_THROW(m->run({at::ones({3}, at::kBool)}));
}

// bitwise_not: bool masks and integers; floats are ATen's error.
TEST(OutMath, BitwiseNot) {
  runGroups(unaryIR("bitwise_not"),
            {{{(at::rand({5, 8}) > 0.5).t()}, {at::rand({3, 4}) > 0.5}},
             {{at::randint(-50, 50, {4, 3}, at::kInt)}},
             {{at::randint(0, 255, {9}, at::kByte)}}},
            exactOut("aten::bitwise_not"));
  auto m = Module::fromIR(unaryIR("bitwise_not"));
  EXPECT_ANY_THROW(m->run({at::ones({3})}));
}

// maximum / minimum: broadcasting, NaN propagation and signed zeros, mixed dtypes
// (promotion), a 0-dim operand, non-contiguous operands.
TEST(OutMath, MaximumMinimum) {
  for (const char* op : {"maximum", "minimum"}) {
    SCOPED_TRACE(op);
    runGroups(binaryIR(op),
              {{{at::randn({6, 4}).t(), at::randn({4, 6})}, {at::randn({3, 4}), at::randn({3, 1})}},
               {{at::tensor({NAN, 1.0f, -0.0f, 0.0f}), at::tensor({0.0f, NAN, 0.0f, -0.0f})}},
               {{at::randn({5, 1, 3}), at::randn({4, 1})}},
               {{at::randint(-9, 9, {3, 4}, at::kInt), at::randn({4})}},
               {{at::randint(-9, 9, {2, 3}, at::kLong), at::scalar_tensor(2.5)}}},
              exactOut(std::string("aten::") + op));
  }
}

// a & b (aten::__and__.Tensor) and torch.bitwise_and (aten::bitwise_and.Tensor): bool
// masks (broadcast), integers, mixed int / bool; float operands are ATen's error.
TEST(OutMath, BitwiseAnd) {
  for (const char* op : {"__and__", "bitwise_and"}) {
    SCOPED_TRACE(op);
    runGroups(binaryIR(op),
              {{{at::rand({3, 4}) > 0.5, at::rand({3, 4}) > 0.5}, {at::rand({2, 5}) > 0.3, at::rand({1, 5}) > 0.6}},
               {{at::randint(0, 255, {4, 4}, at::kInt), at::randint(0, 255, {4, 4}, at::kInt).t()}},
               {{at::randint(0, 7, {6}, at::kLong), at::rand({6}) > 0.5}}},
              exactOut(std::string("aten::") + op + ".Tensor"));
    auto m = Module::fromIR(binaryIR(op));
    EXPECT_ANY_THROW(m->run({at::ones({3}), at::ones({3})}));
  }
}

// x.new_zeros(size) keeps x's dtype (int, bool too); an explicit dtype wins; sizes
// may be run-time values.
TEST(OutMath, NewZeros) {
  runGroups(
      "graph(%x : Tensor):\n"
      "  %s : int[] = prim::Constant[value=[2, 3]]()\n"
      "  %n : NoneType = prim::Constant()\n"
      "  %y : Tensor = aten::new_zeros(%x, %s, %n, %n, %n, %n)\n"
      "  return (%y)\n",
      {{{at::randn({4})}, {at::randn({1})}}, {{at::randint(0, 5, {3}, at::kInt)}}, {{at::rand({2}) > 0.5}}},
      exactOut("aten::new_zeros"));
  OpTester(
      "graph(%x : Tensor):\n"
      "  %n : NoneType = prim::Constant()\n"
      "  %d : int = prim::Constant[value=7]()\n"  // float64
      "  %s : int[] = aten::size(%x)\n"
      "  %y : Tensor = aten::new_zeros(%x, %s, %d, %n, %n, %n)\n"
      "  return (%y)\n")
      .inputs({at::randn({4, 5})})
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({1, 0})})
      .tolerance(kExact)
      .expectKernel("aten::new_zeros", kOut)
      .run();
}

}  // namespace
}  // namespace brisk::testing
