// Out-variant kernels of ops_cpu/out_variant/reductions.cc against the interpreter.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

TEST(OutReductions, SumAll) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %t : NoneType = prim::Constant()\n"
      "  %c : Tensor = aten::sum(%a, %t)\n"
      "  return (%c)\n")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({40, 30})})
      .expectKernel("aten::sum", kOut)
      .run();
}

TEST(OutReductions, SumAllIntegersIsLong) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %t : NoneType = prim::Constant()\n"
      "  %c : Tensor = aten::sum(%a, %t)\n"
      "  return (%c)\n")
      .inputs({at::randint(0, 5, {2, 3}, at::kInt)})
      .inputs({at::randint(0, 5, {4, 30}, at::kInt)})
      .expectKernel("aten::sum", kOut)
      .run();
}

TEST(OutReductions, SumDims) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %d : int[] = prim::Constant[value=[0, -1]]()\n"
      "  %k : bool = prim::Constant[value=0]()\n"
      "  %t : NoneType = prim::Constant()\n"
      "  %c : Tensor = aten::sum(%a, %d, %k, %t)\n"
      "  return (%c)\n")
      .inputs({at::randn({2, 3, 4})})
      .inputs({at::randn({5, 6, 7})})
      .expectKernel("aten::sum.dim_IntList", kOut)
      .run();
}

TEST(OutReductions, SumDimsKeepdimDtype) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %d : int[] = prim::Constant[value=[1]]()\n"
      "  %k : bool = prim::Constant[value=1]()\n"
      "  %t : int = prim::Constant[value=7]()\n"  // float64
      "  %c : Tensor = aten::sum(%a, %d, %k, %t)\n"
      "  return (%c)\n")
      .inputs({at::randn({2, 3, 4})})
      .inputs({at::randn({5, 6, 7}).transpose(0, 2)})
      .expectKernel("aten::sum.dim_IntList", kOut)
      .run();
}

TEST(OutReductions, MeanAll) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %t : NoneType = prim::Constant()\n"
      "  %c : Tensor = aten::mean(%a, %t)\n"
      "  return (%c)\n")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({40, 30})})
      .expectKernel("aten::mean", kOut)
      .run();
}

TEST(OutReductions, MeanDims) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %d : int[] = prim::Constant[value=[-1, -2]]()\n"
      "  %k : bool = prim::Constant[value=1]()\n"
      "  %t : NoneType = prim::Constant()\n"
      "  %c : Tensor = aten::mean(%a, %d, %k, %t)\n"
      "  return (%c)\n")
      .inputs({at::randn({1, 3, 4, 4})})
      .inputs({at::randn({2, 8, 7, 7}).contiguous(at::MemoryFormat::ChannelsLast)})
      .expectKernel("aten::mean.dim", kOut)
      .run();
}

// all: bool inputs (a mask check), floats, uint8 (whose result stays uint8), empty.
TEST(OutReductions, AllBoolFloatAndByte) {
  const char* ir =
      "graph(%a : Tensor):\n"
      "  %c : Tensor = aten::all(%a)\n"
      "  return (%c)\n";
  OpTester(ir)
      .inputs({at::rand({3, 4}) > 0.1})
      .inputs({at::ones({5, 7}, at::kBool)})
      .expectKernel("aten::all", kOut)
      .run();
  OpTester(ir).inputs({at::randn({6, 2})}).inputs({at::zeros({0, 3})}).expectKernel("aten::all", kOut).run();
  OpTester(ir)
      .inputs({at::ones({4}, at::kByte)})
      .inputs({at::zeros({9}, at::kByte)})
      .expectKernel("aten::all", kOut)
      .run();
}

// any.dim (core ATen IR): bool result, uint8 for uint8 inputs; exact.
TEST(OutReductions, AnyDim) {
  for (const char* keep : {"0", "1"}) {
    const std::string ir = std::string("graph(%x : Tensor):\n"
                                       "  %d : int = prim::Constant[value=1]()\n"
                                       "  %k : bool = prim::Constant[value=") +
                           keep + "]()\n  %y : Tensor = aten::any(%x, %d, %k)\n  return (%y)\n";
    for (auto dtype : {at::kBool, at::kFloat, at::kByte}) {
      OpTester(ir)
          .inputs({(at::rand({2, 5, 3}) > 0.8).to(dtype)})
          .inputs({(at::rand({4, 7, 2}) > 0.9).to(dtype)})
          .tolerance(Tolerance{0, 0, 0})
          .expectKernel("aten::any.dim", kOut)
          .run();
    }
  }
}

}  // namespace
}  // namespace brisk::testing
