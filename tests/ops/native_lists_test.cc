// ops_cpu native list kernels against the interpreter, including list mutation
// (aten::append.t inside a loop, aten::_set_item.t on a copy) seen through every holder of
// the list; Python slices (negative / None bounds and steps) and sums of lists.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kNative = KernelKind::kNative;

c10::IValue I(int64_t v) { return c10::IValue(v); }

TEST(NativeLists, GetItem) {
  OpTester(R"IR(
graph(%x : Tensor, %i : int):
  %s : int[] = aten::size(%x)
  %a : int = aten::__getitem__(%s, %i)
  %l : Tensor[] = prim::ListConstruct(%x, %x)
  %t : Tensor = aten::__getitem__(%l, %i)
  %out : (int, Tensor) = prim::TupleConstruct(%a, %t)
  return (%out))IR")
      .inputs({at::randn({2, 3}), I(1)})
      .inputs({at::randn({4, 5}), I(-2)})
      .expectKernel("aten::__getitem__.t", kNative)
      .run();
}

TEST(NativeLists, LenAndListCopy) {
  OpTester(R"IR(
graph(%x : Tensor, %y : int):
  %s : int[] = aten::size(%x)
  %c : int[] = aten::list(%s)
  %u : int[] = aten::append(%c, %y)
  %n : int = aten::len(%s)
  %m : int = aten::len(%c)
  %out : (int[], int[], int, int) = prim::TupleConstruct(%s, %c, %n, %m)
  return (%out))IR")
      .inputs({at::randn({2, 3}), I(7)})
      .inputs({at::randn({4, 5}), I(-1)})
      .expectKernel("aten::list.t", kNative)
      .expectKernel("aten::len.t", kNative)
      .expectKernel("aten::append.t", kNative)
      .run();
}

// append mutates the list every holder sees; a fresh list per run (no carry-over).
TEST(NativeLists, AppendInLoop) {
  OpTester(R"IR(
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct()
  %li : int[] = prim::ListConstruct()
  %alias : Tensor[] = aten::list(%l)
  %k : int = prim::Loop(%n, %true, %zero)
    block0(%i : int, %acc : int):
      %a : Tensor = aten::mul(%x, %i)
      %r : Tensor[] = aten::append(%l, %a)
      %ri : int[] = aten::append(%li, %i)
      -> (%true, %i)
  %len : int = aten::len(%l)
  %lenc : int = aten::len(%alias)
  %c : Tensor = aten::cat(%l, %zero)
  %out : (Tensor[], int[], int, int, Tensor) = prim::TupleConstruct(%l, %li, %len, %lenc, %c)
  return (%out))IR")
      .inputs({at::randn({2, 3}), I(3)})
      .inputs({at::randn({4, 5}), I(5)})
      .expectKernel("aten::append.t", kNative)
      .run();
}

TEST(NativeLists, AddConcatenates) {
  OpTester(R"IR(
graph(%x : Tensor, %y : Tensor):
  %a : int[] = aten::size(%x)
  %b : int[] = aten::size(%y)
  %c : int[] = aten::add(%a, %b)
  %out : (int[], int[]) = prim::TupleConstruct(%c, %a)
  return (%out))IR")
      .inputs({at::randn({2, 3}), at::randn({4})})
      .inputs({at::randn({4, 5}), at::randn({2})})
      .expectKernel("aten::add.t", kNative)
      .run();
}

TEST(NativeLists, ContainsAndEq) {
  OpTester(R"IR(
graph(%x : Tensor, %y : Tensor, %k : int):
  %a : int[] = aten::size(%x)
  %b : int[] = aten::size(%y)
  %c : bool = aten::__contains__(%a, %k)
  %d : bool = aten::eq(%a, %b)
  %e : bool = aten::ne(%a, %b)
  %out : (bool, bool, bool) = prim::TupleConstruct(%c, %d, %e)
  return (%out))IR")
      .inputs({at::randn({2, 3}), at::randn({2, 3}), I(3)})
      .inputs({at::randn({4, 5}), at::randn({4, 6}), I(7)})
      .expectKernel("aten::__contains__.int_list", kNative)
      .expectKernel("aten::eq.int_list", kNative)
      .expectKernel("aten::ne.int_list", kNative)
      .run();
}

TEST(NativeLists, AllAny) {
  OpTester(R"IR(
graph(%a : bool, %b : bool):
  %l : bool[] = prim::ListConstruct(%a, %b)
  %x : bool = aten::all(%l)
  %y : bool = aten::any(%l)
  %out : (bool, bool) = prim::TupleConstruct(%x, %y)
  return (%out))IR")
      .inputs({c10::IValue(true), c10::IValue(true)})
      .inputs({c10::IValue(false), c10::IValue(true)})
      .inputs({c10::IValue(false), c10::IValue(false)})
      .expectKernel("aten::all.bool", kNative)
      .expectKernel("aten::any.bool", kNative)
      .run();
}

// copy.t makes a new list: _set_item.t on the copy leaves the original alone, and its
// result is the copy itself (mutated in place).
TEST(NativeListsMore, SetItemOnACopy) {
  OpTester(R"IR(
graph(%x : Tensor, %i : int, %v : int):
  %s : int[] = aten::size(%x)
  %c : int[] = aten::copy(%s)
  %r : int[] = aten::_set_item(%c, %i, %v)
  %l : Tensor[] = prim::ListConstruct(%x, %x)
  %lc : Tensor[] = aten::copy(%l)
  %y : Tensor = aten::neg(%x)
  %lr : Tensor[] = aten::_set_item(%lc, %i, %y)
  %n : int = aten::len(%r)
  %out : (int[], int[], int[], Tensor[], Tensor[], int) = prim::TupleConstruct(%s, %c, %r, %l, %lc, %n)
  return (%out))IR")
      .inputs({at::randn({2, 3}), I(0), I(7)})
      .inputs({at::randn({4, 5}), I(-1), I(-3)})
      .expectKernel("aten::copy.t", kNative)
      .expectKernel("aten::_set_item.t", kNative)
      .run();
}

// Python's slice rules: negative and out-of-range bounds, negative steps, None bounds
// (the defaults depend on the step's sign), empty results.
TEST(NativeListsMore, Slice) {
  OpTester(R"IR(
graph(%x : Tensor, %a : int, %b : int, %st : int):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %s : int[] = aten::size(%x)
  %p : int[] = aten::slice(%s, %a, %b, %st)
  %q : int[] = aten::slice(%s, %none, %none, %st)
  %r : int[] = aten::slice(%s, %a, %none, %one)
  %t : int[] = aten::slice(%s, %none, %b, %st)
  %l : Tensor[] = prim::ListConstruct(%x, %x, %x)
  %u : Tensor[] = aten::slice(%l, %a, %b, %st)
  %out : (int[], int[], int[], int[], Tensor[]) = prim::TupleConstruct(%p, %q, %r, %t, %u)
  return (%out))IR")
      .inputs({at::randn({2, 3, 4, 5, 6}), I(1), I(4), I(2)})
      .inputs({at::randn({2, 3, 4, 5, 6}), I(-1), I(0), I(-1)})
      .inputs({at::randn({2, 3, 4, 5, 6}), I(-10), I(10), I(3)})
      .inputs({at::randn({2, 3, 4, 5, 6}), I(3), I(1), I(1)})
      .inputs({at::randn({2, 3, 4, 5, 6}), I(10), I(-10), I(-2)})
      .expectKernel("aten::slice.t", kNative)
      .run();
}

TEST(NativeListsMore, Sums) {
  OpTester(R"IR(
graph(%x : Tensor, %f : float, %g : float, %b : bool):
  %s : int[] = aten::size(%x)
  %n : int = aten::sum(%s)
  %fl : float[] = prim::ListConstruct(%f, %g, %f)
  %fs : float = aten::sum(%fl)
  %bl : bool[] = prim::ListConstruct(%b, %b, %b)
  %bs : int = aten::sum(%bl)
  %e : int[] = prim::ListConstruct()
  %es : int = aten::sum(%e)
  %out : (int, float, int, int) = prim::TupleConstruct(%n, %fs, %bs, %es)
  return (%out))IR")
      .inputs({at::randn({2, 3}), c10::IValue(0.1), c10::IValue(0.2), c10::IValue(true)})
      .inputs({at::randn({4, 5}), c10::IValue(-1e10), c10::IValue(3.5), c10::IValue(false)})
      .expectKernel("aten::sum.int", kNative)
      .expectKernel("aten::sum.float", kNative)
      .expectKernel("aten::sum.bool", kNative)
      .run();
}

}  // namespace
}  // namespace brisk::testing
