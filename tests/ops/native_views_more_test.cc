// Native view kernels of ops_cpu/native/views_more.cc (diagonal, narrow, swapaxes,
// alias) against the interpreter, and their aliasing: each test writes through the view
// in place and returns the base too, so a copy instead of a view shows as a mismatch.
// sym_numel (pt2_bookkeeping.cc) is tested here as well.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/executor/module.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kNative = KernelKind::kNative;
const Tolerance kExact{0, 0, 0};

// IR that clones %x, takes `view_line` (defining %v from %y) and adds 1 to %v in place,
// returning (%y, %v).
std::string aliasIR(const std::string& params, const std::string& view_line) {
  return "graph(%x : Tensor" + params +
         "):\n"
         "  %none : NoneType = prim::Constant()\n"
         "  %one : int = prim::Constant[value=1]()\n"
         "  %y : Tensor = aten::clone(%x, %none)\n  " +
         view_line +
         "\n"
         "  %z : Tensor = aten::add_(%v, %one, %one)\n"
         "  %out : (Tensor, Tensor) = prim::TupleConstruct(%y, %v)\n"
         "  return (%out)\n";
}

TEST(NativeViewsMore, DiagonalAliases) {
  OpTester(aliasIR(", %o : int, %a : int, %b : int", "%v : Tensor = aten::diagonal(%y, %o, %a, %b)"))
      .inputs({at::randn({3, 4}), c10::IValue(int64_t{0}), c10::IValue(int64_t{0}), c10::IValue(int64_t{1})})
      .inputs({at::randn({2, 5, 4}), c10::IValue(int64_t{1}), c10::IValue(int64_t{-1}), c10::IValue(int64_t{1})})
      .inputs({at::randn({4, 3, 2}), c10::IValue(int64_t{-2}), c10::IValue(int64_t{0}), c10::IValue(int64_t{-2})})
      .inputs({at::randn({2, 2}), c10::IValue(int64_t{5}), c10::IValue(int64_t{0}), c10::IValue(int64_t{1})})  // empty
      .tolerance(kExact)
      .expectKernel("aten::diagonal", kNative)
      .run();
}

TEST(NativeViewsMore, DiagonalOfNonContiguous) {
  OpTester(R"IR(
graph(%x : Tensor):
  %o : int = prim::Constant[value=0]()
  %a : int = prim::Constant[value=0]()
  %b : int = prim::Constant[value=2]()
  %v : Tensor = aten::diagonal(%x, %o, %a, %b)
  return (%v)
)IR")
      .inputs({at::randn({4, 3, 5}).transpose(0, 1)})
      .inputs({at::randn({2, 3, 2})})
      .tolerance(kExact)
      .expectKernel("aten::diagonal", kNative)
      .run();
}

TEST(NativeViewsMore, NarrowAliases) {
  OpTester(aliasIR(", %d : int, %s : int, %l : int", "%v : Tensor = aten::narrow(%y, %d, %s, %l)"))
      .inputs({at::randn({5, 4}), c10::IValue(int64_t{0}), c10::IValue(int64_t{1}), c10::IValue(int64_t{3})})
      .inputs({at::randn({2, 3, 6}), c10::IValue(int64_t{-1}), c10::IValue(int64_t{-4}), c10::IValue(int64_t{2})})
      .inputs({at::randn({3, 3}), c10::IValue(int64_t{1}), c10::IValue(int64_t{3}), c10::IValue(int64_t{0})})  // empty
      .tolerance(kExact)
      .expectKernel("aten::narrow", kNative)
      .run();
}

TEST(NativeViewsMore, SwapaxesAliases) {
  OpTester(aliasIR(", %a : int, %b : int", "%v : Tensor = aten::swapaxes(%y, %a, %b)"))
      .inputs({at::randn({2, 3}), c10::IValue(int64_t{0}), c10::IValue(int64_t{1})})
      .inputs({at::randn({2, 3, 4}), c10::IValue(int64_t{-1}), c10::IValue(int64_t{0})})
      .inputs({at::randn({2, 3, 4}), c10::IValue(int64_t{1}), c10::IValue(int64_t{1})})
      .tolerance(kExact)
      .expectKernel("aten::swapaxes", kNative)
      .run();
}

TEST(NativeViewsMore, AliasAliases) {
  OpTester(aliasIR("", "%v : Tensor = aten::alias(%y)"))
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4})})
      .tolerance(kExact)
      .expectKernel("aten::alias", kNative)
      .run();
}

// The view kernels on a non-dense-CPU tensor take the Tensor method (same view).
TEST(NativeViewsMore, ViewsKeepStorageAndStrides) {
  auto m = Module::fromIR(R"IR(
graph(%x : Tensor):
  %z : int = prim::Constant[value=0]()
  %o : int = prim::Constant[value=1]()
  %t : int = prim::Constant[value=2]()
  %d : Tensor = aten::diagonal(%x, %o, %z, %t)
  %n : Tensor = aten::narrow(%x, %o, %o, %o)
  %s : Tensor = aten::swapaxes(%x, %z, %t)
  %a : Tensor = aten::alias(%x)
  %out : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%d, %n, %s, %a)
  return (%out)
)IR",
                          Options{}, "views-more");
  at::Tensor x = at::randn({3, 4, 5});
  c10::IValue out = m->run({x});
  const auto& e = out.toTupleRef().elements();
  const at::Tensor expected[] = {x.diagonal(1, 0, 2), x.narrow(1, 1, 1), x.swapaxes(0, 2), at::alias(x)};
  for (size_t i = 0; i < 4; ++i) {
    const at::Tensor& v = e[i].toTensor();
    EXPECT_TRUE(v.is_alias_of(x)) << i;
    EXPECT_EQ(v.sizes(), expected[i].sizes()) << i;
    EXPECT_EQ(v.strides(), expected[i].strides()) << i;
    EXPECT_EQ(v.storage_offset(), expected[i].storage_offset()) << i;
  }
}

TEST(Pt2Bookkeeping, SymNumel) {
  OpTester(R"IR(
graph(%x : Tensor):
  %n : int = aten::sym_numel(%x)
  return (%n)
)IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({0, 4})})
      .inputs({at::randn({})})
      .expectKernel("aten::sym_numel", kNative)
      .run();
}

// _assert_tensor_metadata is tested on PT2 programs (pt2_index_b_test.cc): in a
// TorchScript graph the interpreter's own dead-code pass drops the output-less node.

}  // namespace
}  // namespace brisk::testing
