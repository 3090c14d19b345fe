// ops_cpu out-variant kernel for arange (ops_cpu/out_variant/factories.cc): dtype inference
// (int64 for integral bounds, the default float otherwise), explicit dtypes, and
// bounds/options computed at run time (as nn.EmbeddingBag's offsets are).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

TEST(OutFactories, ArangeStartStepRuntimeBounds) {
  // As EmbeddingBag's 2-D input path: arange(0, numel, size(1), dtype=x.dtype, device=x.device).
  OpTester(R"IR(
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %n : int = aten::numel(%x)
  %s : int = aten::size(%x, %one)
  %dt : int = prim::dtype(%x)
  %dev : Device = prim::device(%x)
  %y : Tensor = aten::arange(%zero, %n, %s, %dt, %none, %dev, %none)
  return (%y))IR")
      .inputs({at::randint(0, 9, {2, 3}, at::kLong)})
      .inputs({at::randint(0, 9, {5, 4}, at::kLong)})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::arange.start_step", kOut)
      .run();
}

TEST(OutFactories, ArangeDtypeInference) {
  // Integral bounds: int64; a float bound: the default dtype; negative float step.
  OpTester(R"IR(
graph(%end : int, %fend : float):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %fstep : float = prim::Constant[value=-0.25]()
  %a : Tensor = aten::arange(%end, %none, %none, %none, %none)
  %b : Tensor = aten::arange(%zero, %fend, %none, %none, %none, %none)
  %c : Tensor = aten::arange(%fend, %zero, %fstep, %none, %none, %none, %none)
  %r : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c)
  return (%r))IR")
      .inputs({int64_t{4}, 2.5})
      .inputs({int64_t{17}, 9.75})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::arange", kOut)
      .expectKernel("aten::arange.start", kOut)
      .expectKernel("aten::arange.start_step", kOut)
      .run();
}

TEST(OutFactories, ArangeExplicitDtype) {
  OpTester(R"IR(
graph(%end : int):
  %none : NoneType = prim::Constant()
  %f64 : int = prim::Constant[value=7]()
  %i32 : int = prim::Constant[value=3]()
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::arange(%end, %f64, %none, %none, %none)
  %b : Tensor = aten::arange(%one, %end, %i32, %none, %none, %none)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)
  return (%r))IR")
      .inputs({int64_t{3}})
      .inputs({int64_t{12}})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::arange", kOut)
      .expectKernel("aten::arange.start", kOut)
      .run();
}

// full: sizes from the graph (run-time list), dtype from the fill value (float, int,
// bool) or given, as the transformer's mask construction does.
TEST(OutFactories, FullInfersAndTakesDtype) {
  for (const std::string fill : {"float = prim::Constant[value=-inf]()", "int = prim::Constant[value=3]()",
                                 "float = prim::Constant[value=1.5]()"}) {
    SCOPED_TRACE(fill);
    OpTester("graph(%x : Tensor):\n  %v : " + fill +
             "\n"
             "  %none : NoneType = prim::Constant()\n"
             "  %z : int = prim::Constant[value=0]()\n"
             "  %n : int = aten::size(%x, %z)\n"
             "  %s : int[] = prim::ListConstruct(%n, %n)\n"
             "  %y : Tensor = aten::full(%s, %v, %none, %none, %none, %none)\n"
             "  return (%y)\n")
        .inputs({at::randn({3})})
        .inputs({at::randn({7})})
        .expectKernel("aten::full", kOut)
        .run();
  }
  OpTester(
      "graph(%x : Tensor):\n"
      "  %v : int = prim::Constant[value=1]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %dt : int = prim::Constant[value=5]()\n"
      "  %bool : int = prim::Constant[value=11]()\n"
      "  %z : int = prim::Constant[value=0]()\n"
      "  %n : int = aten::size(%x, %z)\n"
      "  %s : int[] = prim::ListConstruct(%n, %z)\n"
      "  %y : Tensor = aten::full(%s, %v, %bool, %none, %none, %none)\n"
      "  %w : Tensor = aten::full(%s, %n, %dt, %none, %none, %none)\n"
      "  %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %w)\n"
      "  return (%r)\n")
      .inputs({at::randn({2})})
      .inputs({at::randn({4})})
      .expectKernel("aten::full", kOut)
      .run();
}

}  // namespace
}  // namespace brisk::testing
