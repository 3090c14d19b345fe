// ops_cpu/native/family_tensor_ops.cc and native_group_norm.cc against the interpreter: torch.tensor(number)
// with and without a dtype, copy_ into a view, remainder(Tensor, Scalar), as_strided
// views, index.Tensor with a None (full-slice) entry, and native_group_norm.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kNative = KernelKind::kNative;
constexpr KernelKind kOut = KernelKind::kOutVariant;

c10::IValue I(int64_t v) { return c10::IValue(v); }
c10::IValue F(double v) { return c10::IValue(v); }

// The natural dtypes (int64, the default float, bool) and explicit ones; a float goes
// through float32 first, as the interpreter's intermediate tensor does; dtype and device
// read from another tensor per run (Swin's scripted mask fill).
TEST(FamilyTensorOps, TensorFromNumber) {
  OpTester(R"IR(
graph(%a : int, %f : float, %c : bool, %x : Tensor):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %f64 : int = prim::Constant[value=7]()
  %i32 : int = prim::Constant[value=3]()
  %t1 : Tensor = aten::tensor(%a, %none, %none, %false)
  %t2 : Tensor = aten::tensor(%f, %none, %none, %false)
  %t3 : Tensor = aten::tensor(%c, %none, %none, %false)
  %t4 : Tensor = aten::tensor(%f, %f64, %none, %false)
  %t5 : Tensor = aten::tensor(%a, %f64, %none, %false)
  %t6 : Tensor = aten::tensor(%f, %i32, %none, %false)
  %t7 : Tensor = aten::tensor(%c, %f64, %none, %false)
  %dt : int = prim::dtype(%x)
  %dev : Device = prim::device(%x)
  %t8 : Tensor = aten::tensor(%a, %dt, %dev, %false)
  %out : (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%t1, %t2, %t3, %t4, %t5, %t6, %t7, %t8)
  return (%out))IR")
      .inputs({I(3), F(0.1), c10::IValue(true), at::randn({2})})
      .inputs({I(-1234567), F(-2.7), c10::IValue(false), at::randn({3})})
      .expectKernel("aten::tensor.int", kOut)
      .expectKernel("aten::tensor.float", kOut)
      .expectKernel("aten::tensor.bool", kOut)
      .tolerance(Tolerance{0, 0, 0})
      .run();
}

// Swin's attention-mask fill: `mask[a:b] = cnt` writes a torch.tensor(int) (converted
// to float, broadcast) into a slice of a fresh tensor; and a tensor source.
TEST(FamilyTensorOps, CopyIntoView) {
  OpTester(R"IR(
graph(%x : Tensor, %y : Tensor, %k : int):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %m : Tensor = aten::mul(%x, %two)
  %v : Tensor = aten::slice(%m, %zero, %zero, %one, %one)
  %c : Tensor = aten::tensor(%k, %none, %none, %false)
  %r : Tensor = aten::copy_(%v, %c, %false)
  %w : Tensor = aten::slice(%m, %zero, %one, %two, %one)
  %s : Tensor = aten::copy_(%w, %y, %false)
  %out : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%m, %r, %s)
  return (%out))IR")
      .inputs({at::randn({3, 4}), at::randn({4}), I(5)})
      .inputs({at::randn({5, 2}), at::randn({2}), I(-2)})
      .expectKernel("aten::copy_", kNative)
      .run();
}

const char* const kRemainderScalarIR = R"IR(
graph(%x : Tensor, %s : int):
  %three : int = prim::Constant[value=3]()
  %f : float = prim::Constant[value=-2.5]()
  %a : Tensor = aten::remainder(%x, %three)
  %b : Tensor = aten::remainder(%x, %f)
  %c : Tensor = aten::remainder(%x, %s)
  %out : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c)
  return (%out))IR";

// Constant int and float divisors and one read per run; an int64 tensor stays int64
// with an int divisor and becomes float with a float one.
TEST(FamilyTensorOps, RemainderScalarFloat) {
  OpTester(kRemainderScalarIR)
      .inputs({at::randn({2, 3}) * 10, I(4)})
      .inputs({at::randn({4, 5}) * 10, I(-3)})
      .expectKernel("aten::remainder.Scalar", kOut)
      .run();
}

TEST(FamilyTensorOps, RemainderScalarLong) {
  OpTester(kRemainderScalarIR)
      .inputs({at::randint(-20, 20, {3, 7}, at::kLong), I(6)})
      .inputs({at::randint(-20, 20, {2, 2}, at::kLong), I(-4)})
      .expectKernel("aten::remainder.Scalar", kOut)
      .run();
}

TEST(FamilyTensorOps, AsStrided) {
  OpTester(R"IR(
graph(%x : Tensor):
  %size : int[] = prim::Constant[value=[2, 2]]()
  %stride : int[] = prim::Constant[value=[1, 2]]()
  %off : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::as_strided(%x, %size, %stride, %off)
  %z : Tensor = aten::as_strided(%x, %size, %stride, %none)
  %w : Tensor = aten::mul(%y, %z)
  %out : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%y, %z, %w)
  return (%out))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4, 5})})
      .expectKernel("aten::as_strided", kNative)
      .run();
}

TEST(FamilyTensorOps, IndexTensor) {
  OpTester(R"IR(
graph(%x : Tensor, %i : Tensor):
  %none : NoneType = prim::Constant()
  %l : Tensor?[] = prim::ListConstruct(%none, %i)
  %y : Tensor = aten::index(%x, %l)
  %l2 : Tensor?[] = prim::ListConstruct(%i)
  %z : Tensor = aten::index(%x, %l2)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%y, %z)
  return (%out))IR")
      .inputs({at::randn({4, 5}), at::tensor({0, 3, 1}, at::kLong)})
      .inputs({at::randn({6, 4}), at::tensor({3, 3, 0, 1, 2, -1}, at::kLong)})
      .inputs({at::randn({4, 5}), at::tensor({2}, at::kLong)})
      .expectKernel("aten::index.Tensor", kOut)
      .run();
}

// native_group_norm (core ATen IR) with constant affine parameters and without; N, C and
// HxW are graph values as in an exported program.
TEST(FamilyTensorOps, NativeGroupNorm) {
  OpTester("graph(%x : Tensor, %n : int, %c : int, %hw : int):\n" + constTensorIR("w", {6}) + constTensorIR("b", {6}) +
           R"IR(
  %none : NoneType = prim::Constant()
  %g : int = prim::Constant[value=3]()
  %eps : float = prim::Constant[value=1e-05]()
  %y : Tensor, %m : Tensor, %r : Tensor = aten::native_group_norm(%x, %w, %b, %n, %c, %hw, %g, %eps)
  %y2 : Tensor, %m2 : Tensor, %r2 : Tensor = aten::native_group_norm(%x, %none, %none, %n, %c, %hw, %g, %eps)
  %out : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%y, %m, %r, %y2)
  return (%out))IR")
      .inputs({at::randn({2, 6, 4}), I(2), I(6), I(4)})
      .inputs({at::randn({3, 6, 7}) * 5 + 1, I(3), I(6), I(7)})
      .expectKernel("aten::native_group_norm", kOut)
      .tolerance(Tolerance{1e-5, 1e-6, 1e-6})
      .run();
}

}  // namespace
}  // namespace brisk::testing
