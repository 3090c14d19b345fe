// prim::If / prim::Loop blocks that return or carry one value at several positions.
// The executor moves a block's local return values out of their slots; a value at two
// positions must reach both (the first copy used to be moved away, leaving None), as
// nn.MultiheadAttention's `q, k, v = a, a, a` does under a mask.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/executor/module.h"
#include "core/common/options.h"

namespace brisk {
namespace {

std::vector<at::Tensor> tensors(const c10::IValue& out) {
  std::vector<at::Tensor> ts;
  for (const c10::IValue& v : out.toTupleRef().elements()) {
    EXPECT_TRUE(v.isTensor()) << "output is " << v.tagKind();
    ts.push_back(v.isTensor() ? v.toTensor() : at::Tensor());
  }
  return ts;
}

void expectAll(const std::vector<at::Tensor>& got, const at::Tensor& expected) {
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(got[i].defined()) << "output " << i;
    EXPECT_TRUE(got[i].allclose(expected)) << "output " << i;
  }
}

// Under every kernel choice: the duplicate handling belongs to the executor, not to a
// kernel, and fallback / native paths must agree.
std::vector<Options> optionSets() {
  Options plain, fallback, no_native;
  fallback.fallback_only = true;
  no_native.use_native = false;
  return {plain, fallback, no_native};
}

TEST(ControlFlow, IfReturnsOneValueTwice) {
  const char* ir = R"IR(
graph(%x : Tensor, %c : bool):
  %two : int = prim::Constant[value=2]()
  %a : Tensor, %b : Tensor = prim::If(%c)
    block0():
      %y : Tensor = aten::mul(%x, %two)
      -> (%y, %y)
    block1():
      -> (%x, %x)
  return (%a, %b)
)IR";
  for (const Options& o : optionSets()) {
    auto m = Module::fromIR(ir, o, "if-twice");
    at::Tensor x = at::randn({3, 4});
    at::Tensor x_copy = x.clone();
    for (int rep = 0; rep < 3; ++rep) {
      expectAll(tensors(m->run({x, true})), x * 2);
      expectAll(tensors(m->run({x, false})), x);
    }
    EXPECT_TRUE(x.equal(x_copy)) << "input changed";
  }
}

TEST(ControlFlow, NestedIfReturnsOneValueThreeTimes) {
  const char* ir = R"IR(
graph(%x : Tensor, %c : bool, %d : bool):
  %two : int = prim::Constant[value=2]()
  %a : Tensor, %b : Tensor, %e : Tensor = prim::If(%c)
    block0():
      %p : Tensor, %q : Tensor, %r : Tensor = prim::If(%d)
        block0():
          %y : Tensor = aten::mul(%x, %two)
          -> (%y, %y, %y)
        block1():
          %z : Tensor = aten::neg(%x)
          -> (%z, %z, %z)
      -> (%p, %q, %r)
    block1():
      -> (%x, %x, %x)
  return (%a, %b, %e)
)IR";
  for (const Options& o : optionSets()) {
    auto m = Module::fromIR(ir, o, "nested-if");
    at::Tensor x = at::randn({5});
    expectAll(tensors(m->run({x, true, true})), x * 2);
    expectAll(tensors(m->run({x, true, false})), -x);
    expectAll(tensors(m->run({x, false, true})), x);
  }
}

TEST(ControlFlow, LoopCarriesOneValueTwice) {
  // Carried (p, q) start as (x, x); each trip s = 2p + q, carried on as (s, s):
  // 3x, 9x, 27x.
  const char* ir = R"IR(
graph(%x : Tensor):
  %n : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %a : Tensor, %b : Tensor = prim::Loop(%n, %t, %x, %x)
    block0(%i : int, %p : Tensor, %q : Tensor):
      %z : Tensor = aten::mul(%p, %two)
      %s : Tensor = aten::add(%z, %q, %one)
      -> (%t, %s, %s)
  return (%a, %b)
)IR";
  for (const Options& o : optionSets()) {
    auto m = Module::fromIR(ir, o, "loop-twice");
    at::Tensor x = at::randn({2, 3});
    at::Tensor x_copy = x.clone();
    for (int rep = 0; rep < 3; ++rep) expectAll(tensors(m->run({x})), x * 27);
    EXPECT_TRUE(x.equal(x_copy)) << "input changed";
  }
}

TEST(ControlFlow, TopLevelReturnsOneValueTwice) {
  const char* ir = R"IR(
graph(%x : Tensor):
  %y : Tensor = aten::relu(%x)
  return (%y, %x, %y, %x)
)IR";
  for (const Options& o : optionSets()) {
    auto m = Module::fromIR(ir, o, "return-twice");
    at::Tensor x = at::randn({4});
    for (int rep = 0; rep < 3; ++rep) {
      auto out = tensors(m->run({x}));
      ASSERT_EQ(out.size(), 4u);
      EXPECT_TRUE(out[0].equal(at::relu(x)));
      EXPECT_TRUE(out[2].equal(at::relu(x)));
      EXPECT_TRUE(out[1].equal(x));
      EXPECT_TRUE(out[3].equal(x));
    }
  }
}

}  // namespace
}  // namespace brisk
