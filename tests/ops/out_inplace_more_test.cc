// In-place clamp_, silu_, hardswish_, masked_fill_.Scalar, fill_.Tensor and eval-mode
// dropout_ (ops_cpu/out_variant/inplace.cc) against the interpreter. The frontend's
// RemoveTensorMutation makes in-place ops functional where that is safe, so these
// tests mutate rows of an intermediate through views, or a model input: every write
// must show in the intermediate (or the caller's tensor) and each result is `self`.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/executor/module.h"
#include "tests/ops/op_groups.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

// In-place ops come from the out-variant registry; their output is `self` itself.
constexpr KernelKind kOut = KernelKind::kOutVariant;
constexpr OutputContract kSelf = OutputContract::kFresh;

// Rows 0-5 of w = 2x mutated through views by each op, then all of w by dropout_.
TEST(OutInPlaceMore, ThroughViews) {
  const char* ir = R"IR(
graph(%x : Tensor, %m : Tensor, %t : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %three : int = prim::Constant[value=3]()
  %four : int = prim::Constant[value=4]()
  %five : int = prim::Constant[value=5]()
  %lo : float = prim::Constant[value=-0.5]()
  %hi : float = prim::Constant[value=0.75]()
  %none : NoneType = prim::Constant()
  %fill : float = prim::Constant[value=-7.5]()
  %p : float = prim::Constant[value=0.25]()
  %false : bool = prim::Constant[value=0]()
  %w : Tensor = aten::mul(%x, %two)
  %v0 : Tensor = aten::select(%w, %zero, %zero)
  %a : Tensor = aten::clamp_(%v0, %lo, %hi)
  %v1 : Tensor = aten::select(%w, %zero, %one)
  %b : Tensor = aten::clamp_(%v1, %none, %lo)
  %v2 : Tensor = aten::select(%w, %zero, %two)
  %c : Tensor = aten::silu_(%v2)
  %v3 : Tensor = aten::select(%w, %zero, %three)
  %d : Tensor = aten::hardswish_(%v3)
  %v4 : Tensor = aten::select(%w, %zero, %four)
  %e : Tensor = aten::masked_fill_(%v4, %m, %fill)
  %v5 : Tensor = aten::select(%w, %zero, %five)
  %f : Tensor = aten::fill_(%v5, %t)
  %g : Tensor = aten::dropout_(%w, %p, %false)
  %r : (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%w, %a, %b, %c, %d, %e, %f, %g)
  return (%r))IR";
  runGroups(ir,
            {{{at::randn({6, 9}) * 3, at::rand({9}) > 0.5, at::scalar_tensor(1.25)},
              {at::randn({7, 5}) * 3, at::rand({1}) > 0.5, at::scalar_tensor(-3.0)}},
             {{at::randn({6, 3}, at::kDouble), at::rand({3}) > 0.5, at::scalar_tensor(2.0)}}},
            [](OpTester& t) {
              t.tolerance(Tolerance{0, 0, 0})
                  .expectKernel("aten::clamp_", kOut, kSelf)
                  .expectKernel("aten::silu_", kOut, kSelf)
                  .expectKernel("aten::hardswish_", kOut, kSelf)
                  .expectKernel("aten::masked_fill_.Scalar", kOut, kSelf)
                  .expectKernel("aten::fill_.Tensor", kOut, kSelf)
                  .expectKernel("aten::dropout_", kOut, kSelf);
            });
}

// Integer tensors: clamp_ with integer bounds, masked_fill_ with an int value, fill_
// with an int tensor (and a float one, truncated as ATen does).
TEST(OutInPlaceMore, IntegerClampAndFills) {
  runGroups(R"IR(
graph(%x : Tensor, %m : Tensor, %t : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %lo : int = prim::Constant[value=-3]()
  %hi : int = prim::Constant[value=4]()
  %fill : int = prim::Constant[value=9]()
  %w : Tensor = aten::mul(%x, %two)
  %v0 : Tensor = aten::select(%w, %zero, %zero)
  %a : Tensor = aten::clamp_(%v0, %lo, %hi)
  %v1 : Tensor = aten::select(%w, %zero, %one)
  %b : Tensor = aten::masked_fill_(%v1, %m, %fill)
  %v2 : Tensor = aten::select(%w, %zero, %two)
  %c : Tensor = aten::fill_(%v2, %t)
  return (%w))IR",
            {{{at::randint(-10, 10, {4, 6}, at::kLong), at::rand({6}) > 0.5, at::scalar_tensor(5, at::kLong)},
              {at::randint(-10, 10, {3, 2}, at::kLong), at::rand({2}) > 0.5, at::scalar_tensor(-1, at::kLong)}},
             {{at::randint(-10, 10, {3, 5}, at::kInt), at::rand({5}) > 0.5, at::scalar_tensor(2.75)}}},
            [](OpTester& t) {
              t.tolerance(Tolerance{0, 0, 0})
                  .expectKernel("aten::clamp_", kOut, kSelf)
                  .expectKernel("aten::masked_fill_.Scalar", kOut, kSelf)
                  .expectKernel("aten::fill_.Tensor", kOut, kSelf);
            });
}

// ATen's errors through the dispatcher's op: silu_ of an integer tensor, fill_ with a
// value that is not 0-dim.
TEST(OutInPlaceMore, ErrorsAsATen) {
  auto silu = Module::fromIR(R"IR(
graph(%x : Tensor):
  %a : Tensor = aten::silu_(%x)
  return (%a))IR");
  EXPECT_ANY_THROW(silu->run({at::ones({3}, at::kLong)}));
  auto fill = Module::fromIR(R"IR(
graph(%x : Tensor, %t : Tensor):
  %a : Tensor = aten::fill_(%x, %t)
  return (%a))IR");
  EXPECT_ANY_THROW(fill->run({at::ones({3}), at::ones({2})}));
}

// A model input mutated in place: the caller's tensor changes and is the result.
TEST(OutInPlaceMore, MutatesAModelInput) {
  auto m = Module::fromIR(R"IR(
graph(%x : Tensor, %m : Tensor):
  %lo : float = prim::Constant[value=0.0]()
  %none : NoneType = prim::Constant()
  %v : float = prim::Constant[value=-1.0]()
  %a : Tensor = aten::clamp_(%x, %lo, %none)
  %b : Tensor = aten::masked_fill_(%a, %m, %v)
  return (%b))IR");
  at::Tensor x = at::randn({4, 3});
  at::Tensor mask = at::rand({3}) > 0.5;
  const at::Tensor expected = x.clamp(0.0).masked_fill(mask, -1.0);
  at::Tensor r = m->run({x, mask}).toTensor();
  EXPECT_TRUE(r.is_same(x));
  EXPECT_TRUE(x.equal(expected));
}

}  // namespace
}  // namespace brisk::testing
