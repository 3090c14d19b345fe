// ops_cpu.fuse_view_chain: runs of view ops become one ops_cpu::view_chain node whose
// result is exactly ATen's (values, sizes, strides, storage offset, and the input's
// storage), for the ops it covers, through the fallback to ATen's ops, and with ATen's
// errors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/irparser.h>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "core/graph/graph.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr const char* kChain = "ops_cpu::view_chain";

size_t countOp(const Module& m, const std::string& op) {
  size_t n = 0;
  for (const NodeKernelInfo& info : m.kernelReport()) n += info.op == op;
  return n;
}

// Loads `ir`, checks it has `chains` chain nodes and no node of `gone`, then runs each
// input on brisk and on the interpreter: the output (the first of a tuple) must be the
// same view (sizes, strides, offset, storage) of the same input tensor.
void expectSameViews(const std::string& ir, size_t chains, const std::vector<std::string>& gone,
                     const std::vector<at::Tensor>& inputs) {
  auto m = Module::fromIR(ir, Options{}, "view-chain-test");
  EXPECT_EQ(countOp(*m, kChain), chains) << m->compiled()->graph().str();
  for (const std::string& op : gone) EXPECT_EQ(countOp(*m, op), 0u) << op << " left in:\n" << m->compiled()->graph().str();
  auto g = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(ir, g.get());
  torch::jit::GraphFunction reference("reference", g, nullptr);
  for (const at::Tensor& x : inputs) {
    SCOPED_TRACE("input sizes " + c10::str(x.sizes()) + " strides " + c10::str(x.strides()));
    std::vector<c10::IValue> stack{x};
    reference.run(stack);
    const at::Tensor want =
        stack.at(0).isTuple() ? stack.at(0).toTupleRef().elements()[0].toTensor() : stack.at(0).toTensor();
    for (int rep = 0; rep < 2; ++rep) {
      c10::IValue out = m->run({x});
      const at::Tensor got = out.isTuple() ? out.toTupleRef().elements()[0].toTensor() : out.toTensor();
      EXPECT_EQ(got.sizes(), want.sizes());
      EXPECT_EQ(got.strides(), want.strides());
      EXPECT_EQ(got.storage_offset(), want.storage_offset());
      EXPECT_TRUE(got.storage().is_alias_of(x.storage())) << "not a view of the input";
      EXPECT_EQ(got.is_contiguous(), want.is_contiguous());
      EXPECT_TRUE(at::equal(got, want));
    }
  }
}

// The core ATen IR's GRU h0 reshaping: [1, B, H] -> slice, squeeze, view, unsqueeze,
// view, expand -> [1, B, H].
TEST(ViewChain, GruStateReshapeIsOneNode) {
  expectSameViews(
      "graph(%x : Tensor):\n"
      "  %0 : int = prim::Constant[value=0]()\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %big : int = prim::Constant[value=9223372036854775807]()\n"
      "  %d : int[] = prim::Constant[value=[0]]()\n"
      "  %s1 : int[] = prim::Constant[value=[4, 40]]()\n"
      "  %s2 : int[] = prim::Constant[value=[1, 4, 40]]()\n"
      "  %e : int[] = prim::Constant[value=[1, 4, 40]]()\n"
      "  %f : bool = prim::Constant[value=0]()\n"
      "  %a : Tensor = aten::slice(%x, %0, %0, %big, %1)\n"
      "  %b : Tensor = aten::squeeze(%a, %d)\n"
      "  %c : Tensor = aten::view(%b, %s1)\n"
      "  %u : Tensor = aten::unsqueeze(%c, %0)\n"
      "  %v : Tensor = aten::view(%u, %s2)\n"
      "  %w : Tensor = aten::expand(%v, %e, %f)\n"
      "  return (%w)\n",
      1, {"aten::slice.Tensor", "aten::squeeze.dims", "aten::view", "aten::unsqueeze", "aten::expand"},
      {at::randn({1, 4, 40})});
}

// Every op the chain covers, with negative dims, a None bound, a step, -1 sizes,
// broadcasting and a new leading dim; a contiguous and a permuted input.
TEST(ViewChain, EveryCoveredOp) {
  expectSameViews(
      "graph(%x : Tensor):\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %m1 : int = prim::Constant[value=-1]()\n"
      "  %0 : int = prim::Constant[value=0]()\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %2 : int = prim::Constant[value=2]()\n"
      "  %shape : int[] = prim::Constant[value=[2, 3, -1]]()\n"
      "  %perm : int[] = prim::Constant[value=[3, 0, 1, 2]]()\n"
      "  %exp : int[] = prim::Constant[value=[2, -1, -1, 4]]()\n"
      "  %no : bool = prim::Constant[value=0]()\n"
      "  %a : Tensor = aten::slice(%x, %m1, %1, %none, %2)\n"  // [6, 4, 8] -> [6, 4, 4]
      "  %b : Tensor = aten::select(%a, %1, %m1)\n"            // [6, 4]
      "  %c : Tensor = aten::view(%b, %shape)\n"               // [2, 3, 4]
      "  %d : Tensor = aten::unsqueeze(%c, %m1)\n"             // [2, 3, 4, 1]
      "  %e : Tensor = aten::permute(%d, %perm)\n"             // [1, 2, 3, 4]
      "  %f : Tensor = aten::transpose(%e, %1, %2)\n"          // [1, 3, 2, 4]
      "  %g : Tensor = aten::squeeze(%f)\n"                    // [3, 2, 4]
      "  %h : Tensor = aten::expand(%g, %exp, %no)\n"           // [2, 3, 2, 4]
      "  return (%h)\n",
      1, {"aten::slice.Tensor", "aten::select.int", "aten::view", "aten::permute", "aten::expand"},
      {at::randn({6, 4, 8}), at::randn({8, 4, 6}).permute({2, 1, 0})});
}

// A value read by two nodes ends a chain (its view must exist); a single view is left
// alone (nothing to gain).
TEST(ViewChain, SharedValuesSplitChains) {
  expectSameViews(
      "graph(%x : Tensor):\n"
      "  %0 : int = prim::Constant[value=0]()\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %a : Tensor = aten::unsqueeze(%x, %0)\n"
      "  %b : Tensor = aten::unsqueeze(%a, %0)\n"
      "  %c : Tensor = aten::transpose(%b, %0, %1)\n"
      "  %d : Tensor = aten::unsqueeze(%b, %1)\n"
      "  %t : (Tensor, Tensor) = prim::TupleConstruct(%c, %d)\n"
      "  return (%t)\n",
      1, {}, {at::randn({3, 5})});
}

// What the integer rules refuse goes to ATen's ops: a view of a transposed tensor that
// needs a copy raises ATen's error, named at the chain's node.
TEST(ViewChain, NotViewableRaisesAtensError) {
  const std::string ir =
      "graph(%x : Tensor):\n"
      "  %0 : int = prim::Constant[value=0]()\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %flat : int[] = prim::Constant[value=[-1]]()\n"
      "  %a : Tensor = aten::transpose(%x, %0, %1)\n"
      "  %b : Tensor = aten::view(%a, %flat)\n"
      "  return (%b)\n";
  auto m = Module::fromIR(ir, Options{}, "view-chain-test");
  ASSERT_EQ(countOp(*m, kChain), 1u);
  std::string error;
  try {
    m->run({at::randn({4, 6})});
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("view size is not compatible"), std::string::npos) << error;
  EXPECT_NE(error.find(kChain), std::string::npos) << error;
  // A [4, 1] input is viewable after the transpose: the same Module serves it.
  at::Tensor ok = m->run({at::randn({4, 1})}).toTensor();
  EXPECT_EQ(ok.sizes(), c10::IntArrayRef({4}));
}

// Off by name, and off under fallback_only (the chain has no TorchScript operator).
TEST(ViewChain, DisabledLeavesTheViews) {
  const std::string ir =
      "graph(%x : Tensor):\n"
      "  %0 : int = prim::Constant[value=0]()\n"
      "  %a : Tensor = aten::unsqueeze(%x, %0)\n"
      "  %b : Tensor = aten::unsqueeze(%a, %0)\n"
      "  return (%b)\n";
  Options off;
  off.disabled_passes = {"ops_cpu.fuse_view_chain"};
  EXPECT_EQ(countOp(*Module::fromIR(ir, off, "view-chain-test"), kChain), 0u);
  Options fallback;
  fallback.fallback_only = true;
  EXPECT_EQ(countOp(*Module::fromIR(ir, fallback, "view-chain-test"), kChain), 0u);
  EXPECT_EQ(countOp(*Module::fromIR(ir, Options{}, "view-chain-test"), kChain), 1u);
}

}  // namespace
}  // namespace brisk::testing
