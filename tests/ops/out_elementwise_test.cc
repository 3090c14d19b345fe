// Out-variant kernels of ops_cpu/out_variant/elementwise.cc against the interpreter.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/executor/module.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

// graph(%a, %b) -> op(%a, %b, extra...) with `extra` constant declarations.
std::string binaryIR(const std::string& op, const std::string& consts = "", const std::string& extra_args = "") {
  return "graph(%a : Tensor, %b : Tensor):\n" + consts + "  %c : Tensor = " + op + "(%a, %b" + extra_args +
         ")\n  return (%c)\n";
}

std::string scalarIR(const std::string& op, const std::string& scalar_decl, const std::string& extra = "") {
  return "graph(%a : Tensor):\n  %s : " + scalar_decl + "\n" + extra + "  %c : Tensor = " + op + "(%a, %s" +
         (extra.empty() ? "" : ", %x") + ")\n  return (%c)\n";
}

TEST(OutElementwise, AddTensor) {
  OpTester(binaryIR("aten::add", "  %alpha : int = prim::Constant[value=1]()\n", ", %alpha"))
      .inputs({at::randn({2, 3}), at::randn({2, 3})})
      .inputs({at::randn({8, 5}), at::randn({1, 5})})
      .expectKernel("aten::add.Tensor", kOut)
      .run();
}

TEST(OutElementwise, AddTensorAlphaAndPromotion) {
  // int + float -> float; alpha=2.
  OpTester(binaryIR("aten::add", "  %alpha : int = prim::Constant[value=2]()\n", ", %alpha"))
      .inputs({at::randint(0, 10, {2, 3}, at::kLong), at::randn({2, 3})})
      .inputs({at::randint(0, 10, {6, 7}, at::kLong), at::randn({6, 7})})
      .expectKernel("aten::add.Tensor", kOut)
      .run();
}

TEST(OutElementwise, AddTensorWrappedZeroDim) {
  OpTester(binaryIR("aten::add", "  %alpha : int = prim::Constant[value=1]()\n", ", %alpha"))
      .inputs({at::randn({4, 3}).to(at::kHalf).to(at::kFloat), at::scalar_tensor(2.5, at::kDouble)})
      .inputs({at::randn({9, 3}), at::scalar_tensor(-1.5, at::kDouble)})
      .expectKernel("aten::add.Tensor", kOut)
      .run();
}

TEST(OutElementwise, AddScalar) {
  // int tensor + float scalar -> float
  OpTester(
      "graph(%a : Tensor):\n"
      "  %s : float = prim::Constant[value=1.5]()\n"
      "  %alpha : int = prim::Constant[value=1]()\n"
      "  %c : Tensor = aten::add(%a, %s, %alpha)\n"
      "  return (%c)\n")
      .inputs({at::randint(0, 10, {3}, at::kInt)})
      .inputs({at::randint(0, 10, {17}, at::kInt)})
      .expectKernel("aten::add.Scalar", kOut)
      .run();
}

TEST(OutElementwise, AddScalarRuntimeValue) {
  OpTester(
      "graph(%a : Tensor, %s : float):\n"
      "  %alpha : int = prim::Constant[value=1]()\n"
      "  %c : Tensor = aten::add(%a, %s, %alpha)\n"
      "  return (%c)\n")
      .inputs({at::randn({3}), 0.25})
      .inputs({at::randn({17}), -3.0})
      .expectKernel("aten::add.Scalar", kOut)
      .run();
}

TEST(OutElementwise, SubTensor) {
  OpTester(binaryIR("aten::sub", "  %alpha : float = prim::Constant[value=0.5]()\n", ", %alpha"))
      .inputs({at::randn({2, 3}), at::randn({2, 3})})
      .inputs({at::randn({5, 3}), at::randn({1, 3})})
      .expectKernel("aten::sub.Tensor", kOut)
      .run();
}

TEST(OutElementwise, SubScalar) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %s : int = prim::Constant[value=3]()\n"
      "  %alpha : int = prim::Constant[value=2]()\n"
      "  %c : Tensor = aten::sub(%a, %s, %alpha)\n"
      "  return (%c)\n")
      .inputs({at::randint(0, 10, {3}, at::kLong)})
      .inputs({at::randint(0, 10, {30}, at::kLong)})
      .expectKernel("aten::sub.Scalar", kOut)
      .run();
}

TEST(OutElementwise, MulTensor) {
  OpTester(binaryIR("aten::mul"))
      .inputs({at::randn({2, 3}), at::randn({2, 1})})
      .inputs({at::randn({8, 5}), at::randn({8, 5})})
      .expectKernel("aten::mul.Tensor", kOut)
      .run();
}

TEST(OutElementwise, MulTensorChannelsLast) {
  OpTester(binaryIR("aten::mul"))
      .inputs({at::randn({1, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast), at::randn({1, 3, 1, 1})})
      .inputs({at::randn({2, 8, 5, 5}).contiguous(at::MemoryFormat::ChannelsLast), at::randn({1, 8, 1, 1})})
      .expectKernel("aten::mul.Tensor", kOut)
      .run();
}

TEST(OutElementwise, MulScalar) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %s : float = prim::Constant[value=-2.5]()\n"
      "  %c : Tensor = aten::mul(%a, %s)\n"
      "  return (%c)\n")
      .inputs({at::randn({3})})
      .inputs({at::randn({40})})
      .expectKernel("aten::mul.Scalar", kOut)
      .run();
}

TEST(OutElementwise, DivTensorIntegersGiveFloat) {
  OpTester(binaryIR("aten::div"))
      .inputs({at::randint(0, 10, {4}, at::kLong), at::randint(1, 10, {4}, at::kLong)})
      .inputs({at::randint(0, 10, {9}, at::kLong), at::randint(1, 10, {9}, at::kLong)})
      .expectKernel("aten::div.Tensor", kOut)
      .run();
}

TEST(OutElementwise, DivScalar) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %s : float = prim::Constant[value=8.]()\n"
      "  %c : Tensor = aten::div(%a, %s)\n"
      "  return (%c)\n")
      .inputs({at::randn({2, 4, 3})})
      .inputs({at::randn({3, 5, 3})})
      .expectKernel("aten::div.Scalar", kOut)
      .run();
}

TEST(OutElementwise, DivTensorModeFloor) {
  OpTester(binaryIR("aten::div", "  %m : str = prim::Constant[value=\"floor\"]()\n", ", %m"))
      .inputs({at::randint(-20, 20, {5}, at::kLong), at::randint(1, 6, {5}, at::kLong)})
      .inputs({at::randint(-20, 20, {12}, at::kLong), at::randint(1, 6, {12}, at::kLong)})
      .expectKernel("aten::div.Tensor_mode", kOut)
      .run();
}

TEST(OutElementwise, DivScalarModeTrunc) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %s : int = prim::Constant[value=3]()\n"
      "  %m : str = prim::Constant[value=\"trunc\"]()\n"
      "  %c : Tensor = aten::div(%a, %s, %m)\n"
      "  return (%c)\n")
      .inputs({at::randn({5}) * 10})
      .inputs({at::randn({12}) * 10})
      .expectKernel("aten::div.Scalar_mode", kOut)
      .run();
}

void comparisonTest(const std::string& op) {
  SCOPED_TRACE(op);
  OpTester(binaryIR("aten::" + op))
      .inputs({at::randint(0, 3, {2, 3}).to(at::kFloat), at::randint(0, 3, {2, 3}).to(at::kFloat)})
      .inputs({at::randint(0, 3, {6, 5}).to(at::kFloat), at::randint(0, 3, {1, 5}).to(at::kFloat)})
      .expectKernel("aten::" + op + ".Tensor", kOut)
      .run();
  OpTester(
      "graph(%a : Tensor):\n"
      "  %s : float = prim::Constant[value=1.]()\n"
      "  %c : Tensor = aten::" +
      op +
      "(%a, %s)\n"
      "  return (%c)\n")
      .inputs({at::randint(0, 3, {2, 3}).to(at::kFloat)})
      .inputs({at::randint(0, 3, {6, 5}).to(at::kFloat)})
      .expectKernel("aten::" + op + ".Scalar", kOut)
      .run();
}

TEST(OutElementwise, Eq) { comparisonTest("eq"); }
TEST(OutElementwise, Ne) { comparisonTest("ne"); }
TEST(OutElementwise, Lt) { comparisonTest("lt"); }
TEST(OutElementwise, Le) { comparisonTest("le"); }
TEST(OutElementwise, Gt) { comparisonTest("gt"); }
TEST(OutElementwise, Ge) { comparisonTest("ge"); }

at::Tensor randBool(at::IntArrayRef sizes) { return at::rand(sizes) > 0.5; }

TEST(OutElementwise, LogicalOr) {
  OpTester(binaryIR("aten::logical_or"))
      .inputs({randBool({2, 3}), randBool({2, 3})})
      .inputs({randBool({5, 7}), randBool({5, 7})})
      .expectKernel("aten::logical_or", kOut)
      .run();
}

TEST(OutElementwise, LogicalAnd) {
  OpTester(binaryIR("aten::logical_and"))
      .inputs({randBool({2, 3}), at::randn({2, 3})})
      .inputs({randBool({5, 7}), at::randn({5, 7})})
      .expectKernel("aten::logical_and", kOut)
      .run();
}

TEST(OutElementwise, LogicalNot) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %c : Tensor = aten::logical_not(%a)\n"
      "  return (%c)\n")
      .inputs({randBool({4})})
      .inputs({randBool({3, 9}).view({27})})
      .expectKernel("aten::logical_not", kOut)
      .run();
}

TEST(OutElementwise, Neg) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %c : Tensor = aten::neg(%a)\n"
      "  return (%c)\n")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({7, 3}).t()})  // non-contiguous
      .expectKernel("aten::neg", kOut)
      .run();
}

TEST(OutElementwise, WhereSelf) {
  OpTester(
      "graph(%c : Tensor, %a : Tensor, %b : Tensor):\n"
      "  %r : Tensor = aten::where(%c, %a, %b)\n"
      "  return (%r)\n")
      .inputs({randBool({2, 3}), at::randn({2, 3}), at::randn({1, 3}).to(at::kDouble)})
      .inputs({randBool({6, 4}), at::randn({6, 4}), at::randn({6, 4}).to(at::kDouble)})
      .expectKernel("aten::where.self", kOut)
      .run();
}

TEST(OutElementwise, MaskedFillScalar) {
  OpTester(
      "graph(%a : Tensor, %m : Tensor):\n"
      "  %v : float = prim::Constant[value=-1000000000.]()\n"
      "  %r : Tensor = aten::masked_fill(%a, %m, %v)\n"
      "  return (%r)\n")
      .inputs({at::randn({2, 3}), randBool({2, 3})})
      .inputs({at::randn({4, 6}), randBool({4, 6})})
      .expectKernel("aten::masked_fill.Scalar", kOut)
      .run();
}

TEST(OutElementwise, MaskedFillScalarBroadcastMask) {
  // The mask broadcasts self to a larger shape.
  OpTester(
      "graph(%a : Tensor, %m : Tensor):\n"
      "  %v : int = prim::Constant[value=7]()\n"
      "  %r : Tensor = aten::masked_fill(%a, %m, %v)\n"
      "  return (%r)\n")
      .inputs({at::randn({1, 3}), randBool({2, 3})})
      .inputs({at::randn({6, 1}), randBool({6, 5})})
      .expectKernel("aten::masked_fill.Scalar", kOut)
      .run();
}

TEST(OutElementwise, MaskedFillTensor) {
  OpTester(
      "graph(%a : Tensor, %m : Tensor, %v : Tensor):\n"
      "  %r : Tensor = aten::masked_fill(%a, %m, %v)\n"
      "  return (%r)\n")
      .inputs({at::randn({2, 3}), randBool({2, 3}), at::scalar_tensor(3.0)})
      .inputs({at::randn({4, 6}), randBool({4, 6}), at::scalar_tensor(-1.0)})
      .expectKernel("aten::masked_fill.Tensor", kOut)
      .run();
}

// In-place reuse off: every node of the chain keeps its own retained output.
Options noInPlace() {
  Options o;
  o.inplace_reuse = false;
  return o;
}

TEST(OutElementwise, ChainReusesOutputs) {
  // A chain of out-variant nodes whose intermediates are retained between runs.
  OpTester(
      "graph(%a : Tensor, %b : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %s : float = prim::Constant[value=0.5]()\n"
      "  %c : Tensor = aten::add(%a, %b, %one)\n"
      "  %d : Tensor = aten::mul(%c, %s)\n"
      "  %e : Tensor = aten::mul(%d, %c)\n"
      "  %f : Tensor = aten::sub(%e, %a, %one)\n"
      "  return (%f)\n")
      .options(noInPlace())
      .inputs({at::randn({3}), at::randn({3})})
      .inputs({at::randn({50}), at::randn({50})})
      .expectKernel("aten::add.Tensor", kOut)
      .expectKernel("aten::mul.Scalar", kOut)
      .expectKernel("aten::mul.Tensor", kOut)
      .expectKernel("aten::sub.Tensor", kOut)
      .run();
}

// Same-shape contiguous fp32 add / sub (alpha 1) and mul run as a plain loop: bit-exact
// with ATen on ordinary values, signed zeros, infinities and NaNs; the operands the loop
// does not take (broadcast, non-contiguous, another dtype, alpha 2) still match.
at::Tensor specials(std::vector<int64_t> shape, int seed) {
  at::Tensor t = at::randn(shape) * 3;
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.f, -0.f, inf, -inf, std::nanf(""), 1e-40f, -3e38f, 3e38f};
  for (size_t i = 0; i < v.size() && static_cast<int64_t>(i) < t.numel(); ++i)
    t.view({-1})[(i * 7 + seed) % t.numel()] = v[i];
  return t;
}

TEST(OutElementwise, SameShapeFloatLoopIsBitExact) {
  Options loose;
  loose.strict_inputs = false;
  for (const char* op : {"aten::add", "aten::sub", "aten::mul"}) {
    for (const char* alpha : {"1", "2"}) {
      if (std::string(op) == "aten::mul" && std::string(alpha) == "2") continue;
      SCOPED_TRACE(std::string(op) + " alpha " + alpha);
      const bool has_alpha = std::string(op) != "aten::mul";
      const std::string ir = binaryIR(op, has_alpha ? "  %alpha : int = prim::Constant[value=" + std::string(alpha) + "]()\n" : "",
                                      has_alpha ? ", %alpha" : "");
      if (std::string(alpha) == "1") {
        auto m = Module::fromIR(ir, Options{}, "plain");
        EXPECT_NE(kernelDetail(*m, std::string(op) + ".Tensor").find("a loop"), std::string::npos);
      }
      OpTester(ir)
          .inputs({specials({4, 8}, 0), specials({4, 8}, 3)})
          .inputs({specials({33}, 1), specials({33}, 5)})
          .inputs({specials({5, 6}, 2), specials({1, 6}, 1)})           // broadcast
          .inputs({specials({6, 5}, 2).t(), specials({5, 6}, 4)})       // non-contiguous
          .inputs({specials({3, 3}, 0), specials({3, 3}, 1).to(at::kDouble)})  // promotion
          .inputs({at::randint(-5, 5, {2, 2}, at::kInt), at::randint(-5, 5, {2, 2}, at::kInt)})
          .inputs({at::randn({0, 3}), at::randn({0, 3})})
          .tolerance(Tolerance{0, 0, 0})
          .options(loose)
          .expectKernel(std::string(op) + ".Tensor", kOut)
          .run();
    }
  }
}

// The loop also writes into an operand (in-place reuse): a fresh, single-use product.
TEST(OutElementwise, SameShapeFloatLoopInPlace) {
  OpTester(R"IR(
graph(%a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %p : Tensor = aten::mul(%a, %b)
  %q : Tensor = aten::add(%p, %b, %one)
  %r : Tensor = aten::sub(%a, %q, %one)
  %s : Tensor = aten::mul(%r, %a)
  return (%s))IR")
      .inputs({specials({4, 8}, 0), specials({4, 8}, 3)})
      .inputs({specials({2, 8}, 1), specials({1, 8}, 2)})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::add.Tensor", kOut, OutputContract::kIntoInput)
      .run();
}

}  // namespace
}  // namespace brisk::testing
