// ops_cpu native view kernels: values match the interpreter, and views alias their
// input (an in-place op through the view is seen in the base, and the other way round).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/executor/module.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kNative = KernelKind::kNative;

TEST(NativeViews, ViewConstantShape) {
  OpTester(R"IR(
graph(%x : Tensor):
  %a : int = prim::Constant[value=-1]()
  %b : int = prim::Constant[value=4]()
  %s : int[] = prim::ListConstruct(%a, %b)
  %y : Tensor = aten::view(%x, %s)
  return (%y))IR")
      .inputs({at::randn({2, 3, 4})})
      .inputs({at::randn({5, 6, 4})})
      .expectKernel("aten::view", kNative)
      .run();
}

TEST(NativeViews, ViewDynamicShape) {
  OpTester(R"IR(
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %m1 : int = prim::Constant[value=-1]()
  %n : int = aten::size(%x, %zero)
  %s : int[] = prim::ListConstruct(%n, %m1)
  %y : Tensor = aten::view(%x, %s)
  return (%y))IR")
      .inputs({at::randn({2, 3, 4})})
      .inputs({at::randn({5, 6, 7})})
      .expectKernel("aten::view", kNative)
      .run();
}

// The view shares storage: an in-place op on it is visible through the base.
TEST(NativeViews, ViewAliasesBase) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %y : Tensor = aten::clone(%x, %none)
  %s : int[] = prim::ListConstruct(%m1)
  %v : Tensor = aten::view(%y, %s)
  %w : Tensor = aten::add_(%v, %one, %one)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%y, %v)
  return (%out))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4, 5})})
      .expectKernel("aten::view", kNative)
      .run();
}

TEST(NativeViews, ReshapeViewable) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %y : Tensor = aten::clone(%x, %none)
  %s : int[] = prim::ListConstruct(%m1)
  %v : Tensor = aten::reshape(%y, %s)
  %w : Tensor = aten::mul_(%v, %one)
  %z : Tensor = aten::add_(%v, %one, %one)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%y, %v)
  return (%out))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4, 5})})
      .expectKernel("aten::reshape", kNative)
      .run();
}

// Reshaping a transposed tensor copies: the in-place op must not reach the base.
TEST(NativeViews, ReshapeCopiesWhenNotViewable) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %y : Tensor = aten::clone(%x, %none)
  %t : Tensor = aten::transpose(%y, %zero, %one)
  %s : int[] = prim::ListConstruct(%m1)
  %v : Tensor = aten::reshape(%t, %s)
  %z : Tensor = aten::add_(%v, %one, %one)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%y, %v)
  return (%out))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4, 5})})
      .expectKernel("aten::reshape", kNative)
      .expectKernel("aten::transpose.int", kNative)
      .run();
}

TEST(NativeViews, FlattenAliasesContiguousInput) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %y : Tensor = aten::clone(%x, %none)
  %v : Tensor = aten::flatten(%y, %one, %m1)
  %z : Tensor = aten::add_(%v, %one, %one)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%y, %v)
  return (%out))IR")
      .inputs({at::randn({2, 3, 4})})
      .inputs({at::randn({3, 4, 5})})
      .expectKernel("aten::flatten.using_ints", kNative)
      .run();
}

TEST(NativeViews, FlattenNonContiguousAndScalar) {
  OpTester(R"IR(
graph(%x : Tensor, %s : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %t : Tensor = aten::transpose(%x, %zero, %one)
  %v : Tensor = aten::flatten(%t, %zero, %m1)
  %w : Tensor = aten::flatten(%s, %zero, %m1)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%v, %w)
  return (%out))IR")
      .inputs({at::randn({2, 3, 4}), at::randn({})})
      .inputs({at::randn({3, 4, 5}), at::randn({})})
      .expectKernel("aten::flatten.using_ints", kNative)
      .run();
}

TEST(NativeViews, Permute) {
  OpTester(R"IR(
graph(%x : Tensor):
  %mf : int = prim::Constant[value=0]()
  %a : int = prim::Constant[value=2]()
  %b : int = prim::Constant[value=0]()
  %c : int = prim::Constant[value=1]()
  %s : int[] = prim::ListConstruct(%a, %b, %c)
  %y : Tensor = aten::permute(%x, %s)
  %z : Tensor = aten::contiguous(%y, %mf)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%y, %z)
  return (%out))IR")
      .inputs({at::randn({2, 3, 4})})
      .inputs({at::randn({5, 6, 7})})
      .expectKernel("aten::permute", kNative)
      .run();
}

TEST(NativeViews, TransposeAndT) {
  OpTester(R"IR(
graph(%x : Tensor, %m : Tensor):
  %a : int = prim::Constant[value=-1]()
  %b : int = prim::Constant[value=0]()
  %y : Tensor = aten::transpose(%x, %a, %b)
  %z : Tensor = aten::t(%m)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%y, %z)
  return (%out))IR")
      .inputs({at::randn({2, 3, 4}), at::randn({2, 3})})
      .inputs({at::randn({5, 6, 7}), at::randn({6, 8})})
      .expectKernel("aten::transpose.int", kNative)
      .expectKernel("aten::t", kNative)
      .run();
}

// contiguous returns self when already contiguous (in-place is visible in the base)
// and a copy otherwise.
TEST(NativeViews, ContiguousAliasOrCopy) {
  OpTester(R"IR(
graph(%x : Tensor):
  %mf : int = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::clone(%x, %none)
  %c : Tensor = aten::contiguous(%y, %mf)
  %c1 : Tensor = aten::add_(%c, %one, %one)
  %t : Tensor = aten::transpose(%y, %zero, %one)
  %d : Tensor = aten::contiguous(%t, %mf)
  %d1 : Tensor = aten::add_(%d, %one, %one)
  %out : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%y, %c, %d)
  return (%out))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4, 5})})
      .expectKernel("aten::contiguous", kNative)
      .run();
}

TEST(NativeViews, SelectAliases) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %y : Tensor = aten::clone(%x, %none)
  %v : Tensor = aten::select(%y, %one, %m1)
  %z : Tensor = aten::add_(%v, %one, %one)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%y, %v)
  return (%out))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4, 5})})
      .expectKernel("aten::select.int", kNative)
      .run();
}

TEST(NativeViews, Slice) {
  OpTester(R"IR(
graph(%x : Tensor, %start : int):
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %m1 : int = prim::Constant[value=-1]()
  %big : int = prim::Constant[value=9223372036854775807]()
  %a : Tensor = aten::slice(%x, %one, %start, %m1, %two)
  %b : Tensor = aten::slice(%x, %zero, %none, %none, %one)
  %c : Tensor = aten::slice(%x, %m1, %one, %big, %one)
  %y : Tensor = aten::clone(%x, %none)
  %d : Tensor = aten::slice(%y, %zero, %one, %big, %one)
  %e : Tensor = aten::add_(%d, %one, %one)
  %out : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c, %y)
  return (%out))IR")
      .inputs({at::randn({3, 5}), c10::IValue(int64_t{0})})
      .inputs({at::randn({6, 9}), c10::IValue(int64_t{-7})})
      .expectKernel("aten::slice.Tensor", kNative)
      .run();
}

TEST(NativeViews, SqueezeUnsqueeze) {
  OpTester(R"IR(
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %m1 : int = prim::Constant[value=-1]()
  %a : Tensor = aten::squeeze(%x)
  %b : Tensor = aten::squeeze(%x, %zero)
  %c : Tensor = aten::squeeze(%x, %m1)
  %d : Tensor = aten::unsqueeze(%x, %m1)
  %e : Tensor = aten::unsqueeze(%x, %zero)
  %out : (Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c, %d, %e)
  return (%out))IR")
      .inputs({at::randn({1, 3, 1})})
      .inputs({at::randn({1, 5, 1})})
      .expectKernel("aten::squeeze", kNative)
      .expectKernel("aten::squeeze.dim", kNative)
      .expectKernel("aten::unsqueeze", kNative)
      .run();
}

TEST(NativeViews, ExpandAndExpandAs) {
  OpTester(R"IR(
graph(%x : Tensor, %o : Tensor):
  %false : bool = prim::Constant[value=0]()
  %m1 : int = prim::Constant[value=-1]()
  %zero : int = prim::Constant[value=0]()
  %n : int = aten::size(%o, %zero)
  %s : int[] = prim::ListConstruct(%n, %m1)
  %a : Tensor = aten::expand(%x, %s, %false)
  %b : Tensor = aten::expand_as(%x, %o)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)
  return (%out))IR")
      .inputs({at::randn({1, 3}), at::randn({4, 3})})
      .inputs({at::randn({1, 7}), at::randn({9, 7})})
      .expectKernel("aten::expand", kNative)
      .expectKernel("aten::expand_as", kNative)
      .run();
}

TEST(NativeViews, Chunk) {
  OpTester(R"IR(
graph(%x : Tensor):
  %three : int = prim::Constant[value=3]()
  %m1 : int = prim::Constant[value=-1]()
  %l : Tensor[] = aten::chunk(%x, %three, %m1)
  return (%l))IR")
      .inputs({at::randn({2, 7})})
      .inputs({at::randn({4, 12})})
      .expectKernel("aten::chunk", kNative)
      .run();
}

TEST(NativeViews, SplitForms) {
  OpTester(R"IR(
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %n : int = aten::size(%x, %zero)
  %rest : int = aten::sub(%n, %one)
  %sizes : int[] = prim::ListConstruct(%one, %rest)
  %a : Tensor[] = aten::split(%x, %two, %one)
  %b : Tensor[] = aten::split(%x, %sizes, %zero)
  %out : (Tensor[], Tensor[]) = prim::TupleConstruct(%a, %b)
  return (%out))IR")
      .inputs({at::randn({3, 5})})
      .inputs({at::randn({6, 9})})
      .expectKernel("aten::split.Tensor", kNative)
      .expectKernel("aten::split.sizes", kNative)
      .run();
}

// split_with_sizes (core ATen IR; the LSTM's gate split): views of the input (an
// in-place op on one is seen in the base), negative dims, a non-contiguous input, a
// zero size, and sizes built at run time.
TEST(NativeViews, SplitWithSizes) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %sizes : int[] = prim::Constant[value=[1, 0, 2]]()
  %c : Tensor = aten::clone(%x, %none)
  %l : Tensor[] = aten::split_with_sizes(%c, %sizes, %m1)
  %a : Tensor, %b : Tensor, %d : Tensor = prim::ListUnpack(%l)
  %w : Tensor = aten::add_(%a, %one, %one)
  %out : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%c, %a, %b, %d)
  return (%out))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4, 3})})
      .inputs({at::randn({3, 5}).t()})
      .expectKernel("aten::split_with_sizes", kNative)
      .run();
  OpTester(R"IR(
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %m2 : int = prim::Constant[value=-2]()
  %n : int = aten::size(%x, %zero)
  %rest : int = aten::sub(%n, %one)
  %sizes : int[] = prim::ListConstruct(%one, %rest)
  %l : Tensor[] = aten::split_with_sizes(%x, %sizes, %m2)
  return (%l))IR")
      .inputs({at::randn({3, 5})})
      .inputs({at::randn({6, 2}).t()})
      .expectKernel("aten::split_with_sizes", kNative)
      .run();
}

TEST(NativeViews, SplitWithSizesBadSizesRaiseAtensError) {
  auto m = Module::fromIR(R"IR(
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %sizes : int[] = prim::Constant[value=[1, 1]]()
  %l : Tensor[] = aten::split_with_sizes(%x, %sizes, %zero)
  return (%l))IR",
                          Options{}, "split");
  EXPECT_ANY_THROW(m->run({at::randn({3, 2})}));  // sizes sum to 2, not 3
  EXPECT_EQ(m->run({at::randn({2, 2})}).toTensorList().size(), 2u);
}

TEST(NativeViews, Unbind) {
  OpTester(R"IR(
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %l : Tensor[] = aten::unbind(%x, %one)
  return (%l))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4, 6})})
      .expectKernel("aten::unbind.int", kNative)
      .run();
}

// Same dtype, copy=False: the result is the input itself (in-place through it is seen
// in the base); a different dtype copies.
TEST(NativeViews, ToDtype) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %f32 : int = prim::Constant[value=6]()
  %f64 : int = prim::Constant[value=7]()
  %y : Tensor = aten::clone(%x, %none)
  %a : Tensor = aten::to(%y, %f32, %false, %false, %none)
  %a1 : Tensor = aten::add_(%a, %one, %one)
  %b : Tensor = aten::to(%y, %f64, %false, %false, %none)
  %b1 : Tensor = aten::add_(%b, %one, %one)
  %out : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%y, %a, %b)
  return (%out))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4, 5})})
      .expectKernel("aten::to.dtype", kNative)
      .run();
}

// unflatten.int: attention's head split, with a -1 size and a negative dim.
TEST(NativeViews, Unflatten) {
  OpTester(
      "graph(%a : Tensor):\n"
      "  %d : int = prim::Constant[value=-1]()\n"
      "  %s : int[] = prim::Constant[value=[4, -1]]()\n"
      "  %c : Tensor = aten::unflatten(%a, %d, %s)\n"
      "  return (%c)\n")
      .inputs({at::randn({2, 16})})
      .inputs({at::randn({5, 8}).t().contiguous().t()})
      .expectKernel("aten::unflatten.int", kNative)
      .run();
}

// squeeze.dims (core ATen IR): only the listed size-1 dims go; a view of the input.
TEST(NativeViews, SqueezeDims) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %c : Tensor = aten::clone(%x, %none)
  %d : int[] = prim::Constant[value=[0, -2]]()
  %y : Tensor = aten::squeeze(%c, %d)
  %two : int = prim::Constant[value=2]()
  %z : Tensor = aten::mul_(%y, %two)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %c)
  return (%r))IR")
      .inputs({at::randn({1, 3, 1, 4})})
      .inputs({at::randn({2, 5, 1, 2})})
      .inputs({at::randn({1, 5, 3, 2})})
      .expectKernel("aten::squeeze.dims", kNative)
      .run();
}

}  // namespace
}  // namespace brisk::testing
