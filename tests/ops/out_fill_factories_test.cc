// ops_cpu out-variant kernels for zeros / ones / zeros_like / ones_like / full_like
// (ops_cpu/out_variant/factories.cc): default and explicit dtypes, sizes computed at run time
// (as nn.LSTM's h_zeros), shrinking and growing the retained output, and *_like of a
// non-contiguous tensor (strides preserved, through ATen's op).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;
const Tolerance kExact{0, 0, 0};

TEST(OutFillFactories, ZerosOnesRuntimeSizes) {
  // nn.LSTM's h_zeros: zeros([layers, x.size(0), hidden], dtype=x.dtype, device=x.device).
  OpTester(R"IR(
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %two : int = prim::Constant[value=2]()
  %none : NoneType = prim::Constant()
  %i32 : int = prim::Constant[value=3]()
  %b : int = aten::size(%x, %zero)
  %dt : int = prim::dtype(%x)
  %dev : Device = prim::device(%x)
  %s : int[] = prim::ListConstruct(%two, %b, %two)
  %z : Tensor = aten::zeros(%s, %dt, %none, %dev, %none)
  %o : Tensor = aten::ones(%s, %none, %none, %none, %none)
  %oi : Tensor = aten::ones(%s, %i32, %none, %none, %none)
  %r : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%z, %o, %oi)
  return (%r))IR")
      .inputs({at::randn({3, 4})})
      .inputs({at::randn({7, 2})})
      .inputs({at::randn({1, 2})})
      .tolerance(kExact)
      .expectKernel("aten::zeros", kOut)
      .expectKernel("aten::ones", kOut)
      .run();
}

TEST(OutFillFactories, LikeOps) {
  OpTester(R"IR(
graph(%x : Tensor, %v : float):
  %none : NoneType = prim::Constant()
  %i64 : int = prim::Constant[value=4]()
  %z : Tensor = aten::zeros_like(%x, %none, %none, %none, %none, %none)
  %o : Tensor = aten::ones_like(%x, %i64, %none, %none, %none, %none)
  %f : Tensor = aten::full_like(%x, %v, %none, %none, %none, %none, %none)
  %r : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%z, %o, %f)
  return (%r))IR")
      .inputs({at::randn({2, 3}), c10::IValue(2.5)})
      .inputs({at::randn({4, 5}), c10::IValue(-1.0)})
      .tolerance(kExact)
      .expectKernel("aten::zeros_like", kOut)
      .expectKernel("aten::ones_like", kOut)
      .expectKernel("aten::full_like", kOut)
      .run();
  // An int64 self: the results are int64 (full_like's 7.75 becomes 7), as ATen's.
  OpTester(R"IR(
graph(%x : Tensor, %v : float):
  %none : NoneType = prim::Constant()
  %z : Tensor = aten::zeros_like(%x, %none, %none, %none, %none, %none)
  %f : Tensor = aten::full_like(%x, %v, %none, %none, %none, %none, %none)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%z, %f)
  return (%r))IR")
      .inputs({at::randint(0, 5, {3}, at::kLong), c10::IValue(7.75)})
      .inputs({at::randint(0, 5, {6}, at::kLong), c10::IValue(-2.5)})
      .tolerance(kExact)
      .expectKernel("aten::zeros_like", kOut)
      .expectKernel("aten::full_like", kOut)
      .run();
}

// A transposed input: preserve keeps its strides (ATen's op), an explicit
// contiguous_format gives contiguous ones (the kernel's own path).
TEST(OutFillFactories, LikeOpsStrides) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %contig : int = prim::Constant[value=0]()
  %t : Tensor = aten::transpose(%x, %zero, %one)
  %z : Tensor = aten::zeros_like(%t, %none, %none, %none, %none, %none)
  %c : Tensor = aten::ones_like(%t, %none, %none, %none, %none, %contig)
  %zs : int[] = aten::stride(%z)
  %cs : int[] = aten::stride(%c)
  %r : (Tensor, Tensor, int[], int[]) = prim::TupleConstruct(%z, %c, %zs, %cs)
  return (%r))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({5, 4})})
      .tolerance(kExact)
      .expectKernel("aten::zeros_like", kOut)
      .expectKernel("aten::ones_like", kOut)
      .run();
}

}  // namespace
}  // namespace brisk::testing
