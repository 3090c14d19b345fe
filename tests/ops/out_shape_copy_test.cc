// Out-variant kernels of ops_cpu/out/shape_copy.cc against the interpreter.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

TEST(OutShapeCopy, Cat) {
  OpTester(R"IR(
graph(%a : Tensor, %b : Tensor):
  %l : Tensor[] = prim::ListConstruct(%a, %b, %a)
  %d : int = prim::Constant[value=1]()
  %y : Tensor = aten::cat(%l, %d)
  return (%y)
)IR")
      .inputs({at::randn({2, 3}), at::randn({2, 1}).to(at::kDouble)})  // promotion
      .inputs({at::randn({5, 4}), at::randn({5, 7}).to(at::kDouble)})
      .expectKernel("aten::cat", kOut)
      .run();
}

TEST(OutShapeCopy, CatChannelsLast) {
  OpTester(R"IR(
graph(%a : Tensor, %b : Tensor):
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %d : int = prim::Constant[value=1]()
  %y : Tensor = aten::cat(%l, %d)
  return (%y)
)IR")
      .inputs({at::randn({1, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast),
               at::randn({1, 2, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({2, 3, 6, 5}).contiguous(at::MemoryFormat::ChannelsLast),
               at::randn({2, 5, 6, 5}).contiguous(at::MemoryFormat::ChannelsLast)})
      .expectKernel("aten::cat", kOut)
      .run();
}

TEST(OutShapeCopy, Stack) {
  OpTester(R"IR(
graph(%a : Tensor, %b : Tensor):
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %d : int = prim::Constant[value=-1]()
  %y : Tensor = aten::stack(%l, %d)
  return (%y)
)IR")
      .inputs({at::randn({2, 3}), at::randn({2, 3})})
      .inputs({at::randn({5, 4}), at::randn({5, 4})})
      .expectKernel("aten::stack", kOut)
      .run();
}

TEST(OutShapeCopy, ClonePreserve) {
  OpTester(R"IR(
graph(%a : Tensor):
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::clone(%a, %none)
  return (%y)
)IR")
      .inputs({at::randn({2, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({3, 5, 4, 2}).transpose(1, 2)})
      .expectKernel("aten::clone", kOut)
      .run();
}

TEST(OutShapeCopy, CloneContiguous) {
  OpTester(R"IR(
graph(%a : Tensor):
  %mf : int = prim::Constant[value=0]()
  %y : Tensor = aten::clone(%a, %mf)
  return (%y)
)IR")
      .inputs({at::randn({2, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({3, 5, 4, 2}).transpose(1, 2)})
      .expectKernel("aten::clone", kOut)
      .run();
}

TEST(OutShapeCopy, ZerosLike) {
  OpTester(R"IR(
graph(%a : Tensor):
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::zeros_like(%a, %none, %none, %none, %none, %none)
  return (%y)
)IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({5, 4}).t()})
      .expectKernel("aten::zeros_like", kOut)
      .run();
}

TEST(OutShapeCopy, ZerosLikeDtype) {
  OpTester(R"IR(
graph(%a : Tensor):
  %none : NoneType = prim::Constant()
  %dt : int = prim::dtype(%a)
  %y : Tensor = aten::zeros_like(%a, %dt, %none, %none, %none, %none)
  return (%y)
)IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({5, 4})})
      .expectKernel("aten::zeros_like", kOut)
      .run();
  OpTester(R"IR(
graph(%a : Tensor):
  %none : NoneType = prim::Constant()
  %dt : int = prim::Constant[value=4]()
  %y : Tensor = aten::zeros_like(%a, %dt, %none, %none, %none, %none)
  return (%y)
)IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({5, 4})})
      .expectKernel("aten::zeros_like", kOut)
      .run();
}

}  // namespace
}  // namespace brisk::testing
