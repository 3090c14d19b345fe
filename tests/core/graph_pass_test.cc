// Load-time graph passes: the registry's order and names, the editing calls, core's
// dead-code and constant-folding passes on hand-built graphs (results checked by
// running the Module), Options::disabled_passes, and a pass a plugin adds.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "core/common/error.h"
#include "core/common/options.h"
#include "core/executor/module.h"
#include "core/graph/builtin_passes.h"
#include "core/graph/eval_dropout.h"
#include "core/graph/graph.h"
#include "core/graph/graph_pass.h"
#include "core/graph/graph_verifier.h"
#include "core/kernels/kernel_registry.h"
#include "tests/core/hand_built_ir.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

using testing::schemaOf;

using testing::errorOf;

size_t countKind(const Graph& g, const std::string& kind) {
  size_t n = 0;
  for (const Node* node : g.allNodes()) n += node->kind() == kind;
  return n;
}

TEST(PassRegistry, OrderNamesAndErrors) {
  PassRegistry r;
  std::vector<std::string> ran;
  auto pass = [&](const std::string& name, int order) {
    return GraphPass{name, order, "test", "", [&ran, name](Graph&, const PassContext&) {
                       ran.push_back(name);
                       return size_t{1};
                     }};
  };
  r.add(pass("late", 900));
  r.add(pass("early", 100));
  r.add(pass("middle_a", 500));
  r.add(pass("middle_b", 500));
  EXPECT_NE(errorOf([&] { r.add(pass("early", 1)); }).find("already registered"), std::string::npos);
  EXPECT_NE(errorOf([&] { r.add(pass("", 1)); }).find("needs a name"), std::string::npos);

  Graph g("g");
  g.finalize();
  Options o;
  o.disabled_passes = {"middle_a"};
  std::vector<PassResult> results = r.run(g, PassContext{"m", o});
  EXPECT_EQ(ran, (std::vector<std::string>{"early", "middle_b", "late"}));
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[1].name, "middle_a");
  EXPECT_TRUE(results[1].skipped);
  EXPECT_EQ(results[2].changed, 1u);

  o.disabled_passes = {"no_such_pass"};
  const std::string msg = errorOf([&] { r.checkDisabled(o, "model.pt"); });
  EXPECT_NE(msg.find("no_such_pass"), std::string::npos) << msg;
  EXPECT_NE(msg.find("early, middle_a, middle_b, late"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model.pt"), std::string::npos) << msg;
}

TEST(PassRegistry, APassErrorNamesThePass) {
  PassRegistry r;
  r.add(GraphPass{"broken", 1, "test", "", [](Graph&, const PassContext&) -> size_t { throw std::runtime_error("boom"); }});
  Graph g("g");
  Options o;
  const std::string msg = errorOf([&] { r.run(g, PassContext{"model.pt", o}); });
  EXPECT_NE(msg.find("graph pass 'broken': boom"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model.pt"), std::string::npos) << msg;
}

// x -> relu (read by nothing) ; x -> neg -> return ; x.add_(1) (read by nothing, writes x)
TEST(BuiltinPasses, DeadCodeKeepsEffectsAndResults) {
  Graph g("dce");
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Value* one = g.addConstant(int64_t{1}, c10::IntType::get());
  Node* relu = g.top()->appendNode({"aten::relu", "", schemaOf("aten::relu(Tensor self) -> Tensor"), {x},
                                    {{c10::TensorType::get(), "dead"}}});
  Node* dead2 = g.top()->appendNode({"aten::relu", "", schemaOf("aten::relu(Tensor self) -> Tensor"),
                                     {relu->output(0)}, {{c10::TensorType::get(), "dead2"}}});
  g.top()->appendNode({"aten::add_", "Scalar",
                       schemaOf("aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)"),
                       {x, one, one}, {{c10::TensorType::get(), "effect"}}});
  Node* neg = g.top()->appendNode({"aten::neg", "", schemaOf("aten::neg(Tensor self) -> Tensor"), {x},
                                   {{c10::TensorType::get(), "y"}}});
  g.top()->addReturn(neg->output(0));
  g.finalize();
  (void)dead2;
  EXPECT_EQ(eliminateDeadCode(g), 2u);  // both relus, in one sweep
  g.finalize();
  EXPECT_EQ(g.numNodes(), 2u);
  EXPECT_EQ(countKind(g, "aten::relu"), 0u);
  EXPECT_EQ(countKind(g, "aten::add_"), 1u);
  EXPECT_TRUE(verifyGraph(g).empty()) << g.str();
  EXPECT_EQ(eliminateDeadCode(g), 0u);
}

TEST(GraphEdit, EraseRefusesAReadNodeAndInsertKeepsOrder) {
  Graph g("edit");
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Node* neg = g.top()->appendNode({"aten::neg", "", schemaOf("aten::neg(Tensor self) -> Tensor"), {x},
                                   {{c10::TensorType::get(), "y"}}});
  g.top()->addReturn(neg->output(0));
  EXPECT_NE(errorOf([&] { g.top()->eraseNode(neg); }).find("still read"), std::string::npos);
  Node* relu = g.top()->insertNodeBefore(neg, {"aten::relu", "", schemaOf("aten::relu(Tensor self) -> Tensor"), {x},
                                               {{c10::TensorType::get(), "r"}}});
  EXPECT_EQ(g.replaceAllUses(x, relu->output(0)), 2u);  // neg's input, and relu's own input
  g.finalize();
  EXPECT_EQ(relu->index(), 0u);
  EXPECT_EQ(neg->index(), 1u);
  EXPECT_EQ(relu->output(0)->uses().size(), 2u);
  EXPECT_FALSE(x->hasUses());
}

// y = x @ t(w) + b: t(w) depends on weights only and folds; the Module's result is
// eager's.
TEST(BuiltinPasses, FoldConstantsMatchesEager) {
  const at::Tensor w = at::randn({4, 3});
  auto g = std::make_shared<Graph>("fold");
  Value* x = g->top()->addParam(c10::TensorType::get(), "x");
  Value* wc = g->addConstant(w, c10::TensorType::create(w));
  Node* t = g->top()->appendNode({"aten::t", "", schemaOf("aten::t(Tensor(a) self) -> Tensor(a)"), {wc},
                                  {{c10::TensorType::get(), "wt"}}});
  Node* mm = g->top()->appendNode({"aten::mm", "", schemaOf("aten::mm(Tensor self, Tensor mat2) -> Tensor"),
                                   {x, t->output(0)}, {{c10::TensorType::get(), "y"}}});
  g->top()->addReturn(mm->output(0));
  g->finalize();
  Registries registries;
  Options o;
  o.plugins = {};
  std::vector<PassResult> results = registries.passes.run(*g, PassContext{"fold", o});
  g->finalize();
  auto fold = std::find_if(results.begin(), results.end(), [](const PassResult& r) { return r.name == "fold_constants"; });
  ASSERT_NE(fold, results.end());
  EXPECT_EQ(fold->changed, 1u);
  EXPECT_EQ(g->numNodes(), 1u);
  EXPECT_EQ(g->foldedNodes(), 1u);
  EXPECT_TRUE(verifyGraph(*g).empty()) << g->str();
  Signature sig("fold", {Argument{"x", c10::TensorType::get(), std::nullopt}});
  auto m = Module::fromGraph(g, std::move(sig), o, &registries);
  const at::Tensor in = at::randn({2, 3});
  EXPECT_TRUE(at::allclose(m->run({in}).toTensor(), at::mm(in, w.t())));
}

// Eval-mode dropouts (one feeding another, one returned) go and their readers read the
// input, the tensor ATen's dropout hands back; a dropout whose train flag is true or not
// a constant stays. The Module still computes what eager does.
TEST(BuiltinPasses, RemoveEvalDropoutRewiresReaders) {
  const char* kDropout = "aten::dropout(Tensor input, float p, bool train) -> Tensor";
  auto g = std::make_shared<Graph>("dropout");
  Value* x = g->top()->addParam(c10::TensorType::get(), "x");
  Value* train = g->top()->addParam(c10::BoolType::get(), "train");
  Value* p = g->addConstant(0.25, c10::FloatType::get());
  Value* no = g->addConstant(false, c10::BoolType::get());
  Value* yes = g->addConstant(true, c10::BoolType::get());
  auto dropout = [&](Value* in, Value* t, const char* name) {
    return g->top()->appendNode({"aten::dropout", "", schemaOf(kDropout), {in, p, t}, {{c10::TensorType::get(), name}}});
  };
  Node* d1 = dropout(x, no, "d1");
  Node* d2 = dropout(d1->output(0), no, "d2");
  Node* neg = g->top()->appendNode({"aten::neg", "", schemaOf("aten::neg(Tensor self) -> Tensor"), {d2->output(0)},
                                    {{c10::TensorType::get(), "y"}}});
  Node* kept_train = dropout(neg->output(0), yes, "kept_train");
  Node* kept_flag = dropout(neg->output(0), train, "kept_flag");
  Node* d3 = dropout(neg->output(0), no, "d3");
  g->top()->addReturn(d3->output(0));
  g->top()->addReturn(kept_train->output(0));
  g->top()->addReturn(kept_flag->output(0));
  g->finalize();
  EXPECT_EQ(removeEvalDropout(*g), 3u);
  g->finalize();
  EXPECT_EQ(countKind(*g, "aten::dropout"), 2u);
  EXPECT_EQ(neg->input(0), x);
  EXPECT_EQ(g->top()->returns()[0], neg->output(0));
  EXPECT_TRUE(verifyGraph(*g).empty()) << g->str();
  EXPECT_EQ(removeEvalDropout(*g), 0u);
}

// A model returning a weight directly, inside a tuple and inside a tuple in that tuple:
// the caller gets copies, so writing into them changes nothing for later runs.
TEST(BuiltinPasses, OutputsNeverHandOutConstants) {
  const at::Tensor w = at::arange(4, at::kFloat);
  auto g = std::make_shared<Graph>("consts");
  Value* x = g->top()->addParam(c10::TensorType::get(), "x");
  Value* wc = g->addConstant(w, c10::TensorType::create(w));
  Node* inner = g->top()->appendNode({"prim::TupleConstruct", "", nullptr, {wc},
                                      {{c10::TupleType::create({c10::TensorType::get()}), "inner"}}});
  Node* tuple = g->top()->appendNode(
      {"prim::TupleConstruct", "", nullptr, {x, wc, inner->output(0)},
       {{c10::TupleType::create({c10::TensorType::get(), c10::TensorType::get(), inner->output(0)->type()}), "t"}}});
  g->top()->addReturn(wc);
  g->top()->addReturn(tuple->output(0));
  g->finalize();
  Registries registries;
  Options o;
  o.plugins = {};
  std::vector<PassResult> results = registries.passes.run(*g, PassContext{"consts", o});
  g->finalize();
  auto own = std::find_if(results.begin(), results.end(), [](const PassResult& r) { return r.name == "own_constant_outputs"; });
  ASSERT_NE(own, results.end());
  EXPECT_EQ(own->changed, 3u);
  EXPECT_TRUE(verifyGraph(*g).empty()) << g->str();
  Signature sig("consts", {Argument{"x", c10::TensorType::get(), std::nullopt}});
  auto m = Module::fromGraph(g, std::move(sig), o, &registries);
  for (int run = 0; run < 3; ++run) {
    c10::IValue out = m->run({at::zeros({2})});
    const auto& outs = out.toTupleRef().elements();
    ASSERT_TRUE(at::equal(outs[0].toTensor(), w)) << "run " << run;
    ASSERT_TRUE(at::equal(outs[1].toTupleRef().elements()[1].toTensor(), w)) << "run " << run;
    const at::Tensor nested = outs[1].toTupleRef().elements()[2].toTupleRef().elements()[0].toTensor();
    ASSERT_TRUE(at::equal(nested, w)) << "run " << run;
    outs[0].toTensor().add_(100);
    outs[1].toTupleRef().elements()[1].toTensor().add_(100);
    nested.add_(100);
  }
  EXPECT_TRUE(at::equal(wc->constant().toTensor(), w));
}

const char* kDoubleNeg = R"IR(
graph(%x : Tensor):
  %a : Tensor = aten::neg(%x)
  %b : Tensor = aten::neg(%a)
  %c : Tensor = aten::atan2(%b, %x)
  return (%c)
)IR";

TEST(PluginPass, RunsInOrderAndCanBeDisabled) {
  Registries registries;
  Options o;
  o.plugins = {testing::runfile("tests/plugins/libbrisk_test_plugin.so")};
  auto m = Module::fromIR(kDoubleNeg, o, "double_neg", &registries);
  EXPECT_EQ(countKind(m->compiled()->graph(), "aten::neg"), 0u) << m->compiled()->graph().str();
  std::string seen;
  for (const PassResult& r : m->passReport()) seen += r.name + "=" + std::to_string(r.changed) + " ";
  EXPECT_NE(seen.find("fold_constants=0 test_plugin.drop_double_neg=1 partition_delegates=0 "
                      "eliminate_dead_code_late=2 own_constant_outputs=0"),
            std::string::npos)
      << seen;
  const at::Tensor x = at::randn({5});
  EXPECT_TRUE(at::allclose(m->run({x}).toTensor(), at::atan2(x, x)));

  o.disabled_passes = {"test_plugin.drop_double_neg"};
  auto kept = Module::fromIR(kDoubleNeg, o, "double_neg", &registries);
  EXPECT_EQ(countKind(kept->compiled()->graph(), "aten::neg"), 2u);
  EXPECT_TRUE(at::allclose(kept->run({x}).toTensor(), at::atan2(x, x)));

  o.disabled_passes = {"test_plugin.no_such"};
  const std::string msg = errorOf([&] { Module::fromIR(kDoubleNeg, o, "double_neg", &registries); });
  EXPECT_NE(msg.find("test_plugin.no_such"), std::string::npos) << msg;
  EXPECT_NE(msg.find("test_plugin.drop_double_neg"), std::string::npos) << msg;
}

}  // namespace
}  // namespace brisk
