// TorchScript IR text through the frontend: constants are hoisted into the graph,
// If/Loop become sub-blocks, fork becomes a subgraph, and the converted graphs verify
// and run like the interpreter (fallback kernels only: no plugins here).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/irparser.h>

#include "core/frontend/torchscript/torchscript.h"
#include "core/graph/graph.h"
#include "core/graph/graph_verifier.h"
#include "core/executor/module.h"
#include "tests/testing/model_check.h"
#include "tools/ivalue_compare.h"

namespace brisk {
namespace {

Options noPlugins() {
  Options o;
  o.plugins.clear();
  return o;
}

c10::IValue interpret(const std::string& ir, std::vector<c10::IValue> inputs) {
  auto g = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(ir, g.get());
  torch::jit::GraphFunction fn("ref", g, nullptr);
  fn.run(inputs);
  return inputs.at(0);
}

const char* kLoopIf = R"IR(
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %pos : bool = aten::gt(%i, %zero)
      %next : Tensor = prim::If(%pos)
        block0():
          %m : Tensor = aten::mul(%acc, %acc)
          -> (%m)
        block1():
          %a : Tensor = aten::neg(%acc)
          -> (%a)
      -> (%true, %next)
  return (%y)
)IR";

TEST(Frontend, ConvertsBlocksAndConstants) {
  FrontendResult r = parseTorchScriptIR(kLoopIf, "loop_if");
  const Graph& g = *r.graph;
  EXPECT_TRUE(verifyGraph(g).empty()) << g.str();
  ASSERT_EQ(g.inputs().size(), 2u);
  EXPECT_EQ(r.signature.args()[0].name, "x");
  EXPECT_EQ(r.signature.args()[1].name, "n");
  EXPECT_EQ(g.constants().size(), 2u);  // hoisted out of the nodes
  ASSERT_EQ(g.top()->nodes().size(), 1u);
  const Node* loop = g.top()->nodes()[0];
  EXPECT_EQ(loop->kind(), "prim::Loop");
  ASSERT_EQ(loop->blocks().size(), 1u);
  EXPECT_EQ(loop->block(0)->params().size(), 2u);
  EXPECT_EQ(g.numNodes(), 5u);  // Loop, gt, If, mul, neg
}

TEST(Frontend, LoopIfRunsLikeTheInterpreter) {
  auto m = Module::fromIR(kLoopIf, noPlugins(), "loop_if");
  for (int64_t n : {0, 1, 3}) {
    at::Tensor x = at::rand({3}) + 0.5;
    c10::IValue expected = interpret(kLoopIf, {x, n});
    EXPECT_EQ(compareIValues(m->run({x, n}), expected), "") << "n=" << n;
  }
}

TEST(Frontend, ForkSubgraphBecomesChildModule) {
  const std::string path = testing::zooModel("inception_fork");
  FrontendResult r = loadTorchScript(path, Options{});
  EXPECT_TRUE(verifyGraph(*r.graph).empty()) << r.graph->str();
  int forks = 0;
  for (const Node* n : r.graph->allNodes()) {
    if (n->kind() != "prim::fork") continue;
    ++forks;
    ASSERT_NE(n->subgraph(), nullptr);
    EXPECT_TRUE(verifyGraph(*n->subgraph()).empty()) << n->subgraph()->str();
    EXPECT_GT(n->subgraph()->numNodes(), 0u);
  }
  EXPECT_EQ(forks, 1);
  auto m = Module::load(path, noPlugins());
  EXPECT_EQ(m->compiled()->children().size(), 1u);
  // Frozen modules lose `self`: the signature is forward's arguments only.
  ASSERT_EQ(m->compiled()->signature().args().size(), 1u);
  EXPECT_EQ(m->compiled()->signature().args()[0].name, "x");
}

TEST(Frontend, EveryZooGraphVerifies) {
  for (const char* name : {"resnet18", "mobilenet_v2", "mlp", "deepandwide", "transformer", "inception_fork",
                           "inception_nofork", "control_flow", "multi_output", "chain_mul100", "chain_add100",
                           "lstm_tagger", "gru_encoder"}) {
    FrontendResult r = loadTorchScript(testing::zooModel(name), Options{});
    EXPECT_TRUE(verifyGraph(*r.graph).empty()) << name << ":\n" << r.graph->str();
  }
}

}  // namespace
}  // namespace brisk
