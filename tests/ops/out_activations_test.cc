// Out-variant kernels of ops_cpu/out_variant/activations.cc against the interpreter.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

// graph(%a) -> op(%a, consts...)
std::string unaryIR(const std::string& op, const std::string& consts = "", const std::string& args = "") {
  return "graph(%a : Tensor):\n" + consts + "  %c : Tensor = " + op + "(%a" + args + ")\n  return (%c)\n";
}

void floatUnary(const std::string& ir, const std::string& key) {
  SCOPED_TRACE(key);
  OpTester(ir)
      .inputs({at::randn({2, 3}) * 4})
      .inputs({at::randn({9, 7}) * 4})
      .expectKernel(key, kOut)
      .run();
  // Non-contiguous and channels-last inputs keep their layout semantics.
  OpTester(ir)
      .inputs({at::randn({1, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast) * 4})
      .inputs({at::randn({2, 5, 6, 3}).transpose(1, 3) * 4})
      .expectKernel(key, kOut)
      .run();
}

TEST(OutActivations, Relu) {
  floatUnary(unaryIR("aten::relu"), "aten::relu");
  OpTester(unaryIR("aten::relu"))
      .inputs({at::randint(-5, 5, {4}, at::kInt)})
      .inputs({at::randint(-5, 5, {11}, at::kInt)})
      .expectKernel("aten::relu", kOut)
      .run();
}

TEST(OutActivations, ReluNaN) {
  OpTester(unaryIR("aten::relu"))
      .inputs({at::tensor({1.f, NAN, -1.f})})
      .inputs({at::tensor({NAN, 2.f, -3.f, 0.f, NAN})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::relu", kOut)
      .run();
}

// Small contiguous fp32 inputs take the plain loop, large ones ATen's kernel; both
// must give clamp_min's exact values (NaN and -0.0 pass through), also when the
// retained output shrinks or grows between the two paths.
TEST(OutActivations, ReluSmallLoopAndLargeExact) {
  auto special = [](at::Tensor t) {
    t.view(-1).index_put_({0}, NAN);
    t.view(-1).index_put_({1}, -0.0f);
    t.view(-1).index_put_({2}, -INFINITY);
    return t;
  };
  OpTester(unaryIR("aten::relu"))
      .inputs({special(at::randn({1, 512}))})
      .inputs({special(at::randn({4, 8192}))})  // 32768 elements: ATen's kernel
      .inputs({special(at::randn({3, 1365}))})  // 4095: the loop, with a vector tail
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::relu", kOut)
      .run();
}

TEST(OutActivations, Hardtanh) {
  floatUnary(unaryIR("aten::hardtanh",
                     "  %lo : float = prim::Constant[value=-2.]()\n  %hi : float = prim::Constant[value=3.]()\n",
                     ", %lo, %hi"),
             "aten::hardtanh");
}

TEST(OutActivations, HardtanhAsRelu6) {
  floatUnary(unaryIR("aten::hardtanh",
                     "  %lo : float = prim::Constant[value=0.]()\n  %hi : float = prim::Constant[value=6.]()\n",
                     ", %lo, %hi"),
             "aten::hardtanh");
}

TEST(OutActivations, Relu6) { floatUnary(unaryIR("aten::relu6"), "aten::relu6"); }

TEST(OutActivations, ClampBoth) {
  floatUnary(unaryIR("aten::clamp",
                     "  %lo : float = prim::Constant[value=-1.]()\n  %hi : int = prim::Constant[value=2]()\n",
                     ", %lo, %hi"),
             "aten::clamp");
}

TEST(OutActivations, ClampMinOnly) {
  floatUnary(unaryIR("aten::clamp", "  %lo : float = prim::Constant[value=0.5]()\n  %hi : NoneType = prim::Constant()\n",
                     ", %lo, %hi"),
             "aten::clamp");
}

TEST(OutActivations, Sigmoid) { floatUnary(unaryIR("aten::sigmoid"), "aten::sigmoid"); }

TEST(OutActivations, SigmoidOfIntegersIsFloat) {
  OpTester(unaryIR("aten::sigmoid"))
      .inputs({at::randint(-3, 3, {4}, at::kLong)})
      .inputs({at::randint(-3, 3, {10}, at::kLong)})
      .expectKernel("aten::sigmoid", kOut)
      .run();
}

TEST(OutActivations, Tanh) { floatUnary(unaryIR("aten::tanh"), "aten::tanh"); }

TEST(OutActivations, Gelu) {
  floatUnary(unaryIR("aten::gelu", "  %ap : str = prim::Constant[value=\"none\"]()\n", ", %ap"), "aten::gelu");
}

TEST(OutActivations, GeluTanh) {
  floatUnary(unaryIR("aten::gelu", "  %ap : str = prim::Constant[value=\"tanh\"]()\n", ", %ap"), "aten::gelu");
}

TEST(OutActivations, Silu) { floatUnary(unaryIR("aten::silu"), "aten::silu"); }
TEST(OutActivations, Hardswish) { floatUnary(unaryIR("aten::hardswish"), "aten::hardswish"); }
TEST(OutActivations, Hardsigmoid) { floatUnary(unaryIR("aten::hardsigmoid"), "aten::hardsigmoid"); }

TEST(OutActivations, Softmax) {
  floatUnary(unaryIR("aten::softmax", "  %d : int = prim::Constant[value=-1]()\n  %t : NoneType = prim::Constant()\n",
                     ", %d, %t"),
             "aten::softmax.int");
  floatUnary(unaryIR("aten::softmax", "  %d : int = prim::Constant[value=1]()\n  %t : NoneType = prim::Constant()\n",
                     ", %d, %t"),
             "aten::softmax.int");
}

TEST(OutActivations, LogSoftmax) {
  floatUnary(unaryIR("aten::log_softmax",
                     "  %d : int = prim::Constant[value=0]()\n  %t : NoneType = prim::Constant()\n", ", %d, %t"),
             "aten::log_softmax.int");
}

// _softmax (core ATen IR): ATen's own _softmax_out, exact.
TEST(OutActivations, SoftmaxUnderscore) {
  for (int dim : {-1, 1}) {
    for (auto dtype : {at::kFloat, at::kDouble}) {
      OpTester(
          "graph(%x : Tensor):\n"
          "  %d : int = prim::Constant[value=" + std::to_string(dim) + "]()\n"
          "  %h : bool = prim::Constant[value=0]()\n"
          "  %y : Tensor = aten::_softmax(%x, %d, %h)\n"
          "  return (%y)\n")
          .inputs({at::randn({2, 5, 3}, dtype)})
          .inputs({at::randn({4, 7, 9}, dtype) * 10})
          .tolerance(Tolerance{0, 0, 0})
          .expectKernel("aten::_softmax", kOut)
          .run();
    }
  }
}

// _log_softmax (core ATen IR, e.g. lstm_tagger's head): ATen's own _log_softmax_out,
// exact; every dim (negative ones too), a non-contiguous input, an empty one.
TEST(OutActivations, LogSoftmaxUnderscore) {
  for (int dim : {-1, 0, 1, -3}) {
    for (auto dtype : {at::kFloat, at::kDouble}) {
      SCOPED_TRACE("dim " + std::to_string(dim) + " " + c10::toString(dtype));
      OpTester(
          "graph(%x : Tensor):\n"
          "  %d : int = prim::Constant[value=" + std::to_string(dim) + "]()\n"
          "  %h : bool = prim::Constant[value=0]()\n"
          "  %y : Tensor = aten::_log_softmax(%x, %d, %h)\n"
          "  return (%y)\n")
          .inputs({at::randn({2, 5, 3}, dtype)})
          .inputs({at::randn({4, 7, 9}, dtype) * 10})
          .inputs({at::randn({9, 3, 4}, dtype).transpose(0, 2)})
          .inputs({at::randn({0, 3, 4}, dtype)})
          .tolerance(Tolerance{0, 0, 0})
          .expectKernel("aten::_log_softmax", kOut)
          .run();
    }
  }
}

}  // namespace
}  // namespace brisk::testing
