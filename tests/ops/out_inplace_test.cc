// ops_cpu in-place arithmetic kernels (ops_cpu/out_variant/inplace.cc) against the interpreter.
// The frontend's RemoveTensorMutation makes in-place ops functional where that is safe,
// so these tests use the cases it leaves: mutation through a view, inside a loop body,
// of a model input. The result must be written into `self` (seen through every alias)
// and `self` returned; Scalar and Tensor overloads, broadcasting, integer tensors,
// rounding modes, and ATen's cast error.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/executor/module.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

// In-place ops come from the out-variant registry; their output is `self` itself.
constexpr KernelKind kOutInPlace = KernelKind::kOutVariant;
constexpr OutputContract kSelf = OutputContract::kFresh;

// Row 0 of an intermediate, mutated through the view: the intermediate shows it.
TEST(OutInPlace, ThroughAView) {
  OpTester(R"IR(
graph(%x : Tensor, %y : Tensor, %s : float):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %half : float = prim::Constant[value=0.5]()
  %w : Tensor = aten::mul(%x, %two)
  %v : Tensor = aten::select(%w, %zero, %zero)
  %a : Tensor = aten::add_(%v, %s, %two)
  %b : Tensor = aten::mul_(%v, %s)
  %c : Tensor = aten::sub_(%v, %half, %one)
  %d : Tensor = aten::div_(%v, %s)
  %e : Tensor = aten::add_(%v, %y, %half)
  %f : Tensor = aten::sub_(%v, %y, %one)
  %g : Tensor = aten::mul_(%v, %y)
  %h : Tensor = aten::div_(%v, %y)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%w, %h)
  return (%r))IR")
      .inputs({at::randn({3, 4}), at::rand({4}) + 0.5, c10::IValue(1.5)})
      .inputs({at::randn({2, 7}), at::rand({1}) + 0.5, c10::IValue(-3.0)})
      .expectKernel("aten::add_.Scalar", kOutInPlace, kSelf)
      .expectKernel("aten::mul_.Scalar", kOutInPlace, kSelf)
      .expectKernel("aten::sub_.Scalar", kOutInPlace, kSelf)
      .expectKernel("aten::div_.Scalar", kOutInPlace, kSelf)
      .expectKernel("aten::add_.Tensor", kOutInPlace, kSelf)
      .expectKernel("aten::sub_.Tensor", kOutInPlace, kSelf)
      .expectKernel("aten::mul_.Tensor", kOutInPlace, kSelf)
      .expectKernel("aten::div_.Tensor", kOutInPlace, kSelf)
      .run();
}

// `x = x * 2; for ...: x.add_(1); x.mul_(0.5)`: the loop keeps the in-place ops.
TEST(OutInPlace, InALoop) {
  OpTester(R"IR(
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %half : float = prim::Constant[value=0.5]()
  %w : Tensor = aten::mul(%x, %two)
  prim::Loop(%n, %true)
    block0(%i : int):
      %a : Tensor = aten::add_(%w, %one, %one)
      %b : Tensor = aten::mul_(%w, %half)
      -> (%true)
  return (%w))IR")
      .inputs({at::randn({2, 3}), int64_t{3}})
      .inputs({at::randn({5, 1}), int64_t{1}})
      .expectKernel("aten::add_.Scalar", kOutInPlace, kSelf)
      .expectKernel("aten::mul_.Scalar", kOutInPlace, kSelf)
      .run();
}

// Integer tensors: integer add_ keeps int64; div_ with rounding modes.
TEST(OutInPlace, IntegerAndRoundingModes) {
  OpTester(R"IR(
graph(%x : Tensor, %y : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %floor : str = prim::Constant[value="floor"]()
  %trunc : str = prim::Constant[value="trunc"]()
  %w : Tensor = aten::mul(%x, %three)
  %v : Tensor = aten::select(%w, %zero, %zero)
  %a : Tensor = aten::add_(%v, %three, %one)
  %b : Tensor = aten::div_(%v, %y, %floor)
  %c : Tensor = aten::div_(%v, %three, %trunc)
  return (%w))IR")
      .inputs({at::randint(-20, 20, {2, 3}, at::kLong), at::randint(1, 5, {3}, at::kLong)})
      .inputs({at::randint(-20, 20, {3, 5}, at::kLong), at::randint(1, 5, {5}, at::kLong)})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::add_.Scalar", kOutInPlace, kSelf)
      .expectKernel("aten::div_.Tensor_mode", kOutInPlace, kSelf)
      .expectKernel("aten::div_.Scalar_mode", kOutInPlace, kSelf)
      .run();
}

// A model input mutated in place: the caller's tensor changes, as with the interpreter,
// and the result is that same tensor.
TEST(OutInPlace, MutatesAModelInput) {
  auto m = Module::fromIR(R"IR(
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add_(%x, %one, %one)
  return (%a))IR");
  at::Tensor x = at::zeros({3});
  at::Tensor r = m->run({x}).toTensor();
  EXPECT_TRUE(x.equal(at::ones({3})));
  EXPECT_TRUE(r.is_same(x));
}

// ATen's own error: a float result cannot be written into an int64 tensor.
TEST(OutInPlace, CastErrorAsATen) {
  auto m = Module::fromIR(R"IR(
graph(%x : Tensor):
  %half : float = prim::Constant[value=0.5]()
  %a : Tensor = aten::mul_(%x, %half)
  return (%a))IR");
  try {
    m->run({at::ones({3}, at::kLong)});
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("can't be cast"), std::string::npos) << e.what();
  }
}

// relu_ / hardtanh_ (torch.export's default IR keeps them): rows of an intermediate,
// mutated through views, show in the intermediate; results are `self`.
TEST(OutInPlace, ReluAndHardtanhThroughViews) {
  const char* ir = R"IR(
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %lo : float = prim::Constant[value=-0.5]()
  %hi : float = prim::Constant[value=0.75]()
  %w : Tensor = aten::mul(%x, %two)
  %v : Tensor = aten::select(%w, %zero, %zero)
  %a : Tensor = aten::relu_(%v)
  %u : Tensor = aten::select(%w, %zero, %one)
  %b : Tensor = aten::hardtanh_(%u, %lo, %hi)
  %r : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%w, %a, %b)
  return (%r))IR";
  OpTester(ir)
      .inputs({at::randn({3, 4})})
      .inputs({at::randn({2, 7})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::relu_", kOutInPlace, kSelf)
      .expectKernel("aten::hardtanh_", kOutInPlace, kSelf)
      .run();
  OpTester(ir)  // integers: relu_'s fast path, hardtanh_'s ATen path
      .inputs({at::randint(-5, 5, {3, 4}, at::kLong)})
      .inputs({at::randint(-5, 5, {2, 6}, at::kLong)})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::relu_", kOutInPlace, kSelf)
      .expectKernel("aten::hardtanh_", kOutInPlace, kSelf)
      .run();
}

}  // namespace
}  // namespace brisk::testing
