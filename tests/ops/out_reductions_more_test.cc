// amax, max.dim, prod.dim_int and std (std, std.dim, std.correction) of
// ops_cpu/out_variant/reductions.cc against the interpreter. The kernels call the ops'
// own ATen kernels, so results are compared bit for bit.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/executor/module.h"
#include "tests/ops/op_groups.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

std::function<void(OpTester&)> exactOut(const std::string& key) {
  return [key](OpTester& t) { t.tolerance(Tolerance{0, 0, 0}).expectKernel(key, kOut); };
}

// A one-input graph: %d (type and constant), %k = keepdim (`keep`, "0" or "1"), then
// `body`, returning `ret`.
std::string keepdimIR(const std::string& dim, const char* keep, const std::string& body, const std::string& ret) {
  return "graph(%x : Tensor):\n  %d : " + dim + "\n  %k : bool = prim::Constant[value=" + keep + "]()\n  " + body +
         "\n  return (" + ret + ")\n";
}

// amax over two dims, keepdim or not: floats (non-contiguous; NaN propagates),
// integers, bools.
TEST(OutReductionsMore, Amax) {
  const at::Tensor with_nan = at::where(at::rand({2, 3, 4}) > 0.7, at::full({}, NAN), at::randn({2, 3, 4}));
  for (const char* keep : {"0", "1"}) {
    SCOPED_TRACE(keep);
    runGroups(keepdimIR("int[] = prim::Constant[value=[1, -1]]()", keep, "%y : Tensor = aten::amax(%x, %d, %k)", "%y"),
              {{{at::randn({6, 5, 4}).transpose(0, 2)}, {at::randn({3, 4, 5})}, {with_nan}},
               {{at::randint(-100, 100, {2, 3, 2}, at::kLong)}, {at::randint(-100, 100, {1, 2, 2}, at::kLong)}},
               {{at::rand({2, 2, 3}) > 0.5}}},
              exactOut("aten::amax"));
  }
}

// max.dim: both outputs (values and int64 indices, the first index of ties), keepdim,
// a negative dim, integers, a non-contiguous input.
TEST(OutReductionsMore, MaxDim) {
  for (const char* keep : {"0", "1"}) {
    SCOPED_TRACE(keep);
    runGroups(keepdimIR("int = prim::Constant[value=-1]()", keep,
                        "%v : Tensor, %i : Tensor = aten::max(%x, %d, %k)\n"
                        "  %r : (Tensor, Tensor) = prim::TupleConstruct(%v, %i)",
                        "%r"),
              {{{at::randn({5, 3, 6}).transpose(1, 2)}, {at::randn({2, 4, 7})}},
               {{at::randint(0, 3, {6, 5}, at::kInt)}, {at::randint(0, 3, {2, 5}, at::kInt)}},
               {{at::randn({9})}}},
              exactOut("aten::max.dim"));
  }
}

// Only the indices used (values dead): still the out-variant kernel.
TEST(OutReductionsMore, MaxDimIndicesOnly) {
  runGroups(keepdimIR("int = prim::Constant[value=1]()", "0", "%v : Tensor, %i : Tensor = aten::max(%x, %d, %k)", "%i"),
            {{{at::randn({3, 8})}, {at::randn({2, 4})}}}, exactOut("aten::max.dim"));
}

// prod.dim_int: floats, integers and bools into int64, an explicit dtype, keepdim.
TEST(OutReductionsMore, ProdDim) {
  runGroups(keepdimIR("int = prim::Constant[value=1]()", "0",
                      "%t : NoneType = prim::Constant()\n  %y : Tensor = aten::prod(%x, %d, %k, %t)", "%y"),
            {{{(at::rand({7, 5, 2}) + 0.5).transpose(0, 2)}, {at::rand({3, 6, 2}) + 0.5}},
             {{at::randint(-3, 4, {4, 5}, at::kInt)}, {at::randint(-3, 4, {2, 3}, at::kInt)}},
             {{at::rand({2, 3}) > 0.3}}},
            exactOut("aten::prod.dim_int"));
  runGroups(keepdimIR("int = prim::Constant[value=-1]()", "1",
                      "%t : int = prim::Constant[value=7]()\n"  // float64
                      "  %y : Tensor = aten::prod(%x, %d, %k, %t)",
                      "%y"),
            {{{at::rand({3, 4}) + 0.5}, {at::rand({1, 2}) + 0.5}}, {{at::randint(1, 4, {2, 2}, at::kLong)}}},
            exactOut("aten::prod.dim_int"));
}

// std.dim (unbiased or not, keepdim, dim None), std(self, unbiased) and std.correction
// (int and float corrections); floats, doubles, one-element reductions (NaN with
// Bessel's correction).
TEST(OutReductionsMore, Std) {
  struct Case {
    const char* consts;
    const char* call;
    const char* key;
  };
  const Case cases[] = {
      {"%d : int[] = prim::Constant[value=[1]]()\n  %u : bool = prim::Constant[value=1]()\n"
       "  %k : bool = prim::Constant[value=0]()",
       "aten::std(%x, %d, %u, %k)", "aten::std.dim"},
      {"%d : int[] = prim::Constant[value=[0, 2]]()\n  %u : bool = prim::Constant[value=0]()\n"
       "  %k : bool = prim::Constant[value=1]()",
       "aten::std(%x, %d, %u, %k)", "aten::std.dim"},
      {"%d : NoneType = prim::Constant()\n  %u : bool = prim::Constant[value=1]()\n"
       "  %k : bool = prim::Constant[value=0]()",
       "aten::std(%x, %d, %u, %k)", "aten::std.dim"},
      {"%u : bool = prim::Constant[value=1]()", "aten::std(%x, %u)", "aten::std"},
      {"%d : int[] = prim::Constant[value=[-1]]()\n  %c : int = prim::Constant[value=0]()\n"
       "  %k : bool = prim::Constant[value=1]()",
       "aten::std(%x, %d, %c, %k)", "aten::std.correction"},
      {"%d : NoneType = prim::Constant()\n  %c : float = prim::Constant[value=1.5]()\n"
       "  %k : bool = prim::Constant[value=0]()",
       "aten::std(%x, %d, %c, %k)", "aten::std.correction"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.call);
    const std::string ir =
        std::string("graph(%x : Tensor):\n  ") + c.consts + "\n  %y : Tensor = " + c.call + "\n  return (%y)\n";
    runGroups(ir,
              {{{at::randn({6, 5, 4}).transpose(0, 2)}, {at::randn({3, 4, 5})}, {at::randn({1, 1, 1}) * 100}},
               {{at::randn({2, 3, 4}, at::kDouble)}}},
              exactOut(c.key));
  }
}

// Integer std is ATen's error, through the dispatcher's op.
TEST(OutReductionsMore, StdOfIntegersIsATensError) {
  auto m = Module::fromIR(
      "graph(%x : Tensor):\n"
      "  %u : bool = prim::Constant[value=1]()\n"
      "  %y : Tensor = aten::std(%x, %u)\n"
      "  return (%y)\n");
  EXPECT_ANY_THROW(m->run({at::ones({3}, at::kLong)}));
}

}  // namespace
}  // namespace brisk::testing
