// ops_cpu/native/lists_more.cc against the interpreter: list item assignment (seen
// through every holder of the list), list copies, Python slices and sums.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kNative = KernelKind::kNative;

c10::IValue I(int64_t v) { return c10::IValue(v); }

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
