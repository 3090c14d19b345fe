// ops_cpu out-variant kernel for arange (ops_cpu/out/factories.cc): dtype inference
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

}  // namespace
}  // namespace brisk::testing
