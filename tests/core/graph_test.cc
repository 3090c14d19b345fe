// The IR by hand: construction, dense ids, pre-order numbering, printing, use lists
// kept current by every edit, and verification (good graphs pass; use-before-def, bad
// arity and type mismatches fail).
#include <ATen/core/jit_type.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "core/common/error.h"
#include "core/graph/graph.h"
#include "core/graph/graph_verifier.h"
#include "tests/core/hand_built_ir.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

using testing::schemaOf;

TEST(Graph, BuildPrintVerify) {
  Graph g("relu_add");
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Value* one = g.addConstant(int64_t{1}, c10::IntType::get());
  Node* relu = g.top()->appendNode({"aten::relu", "", schemaOf("aten::relu(Tensor self) -> Tensor"), {x},
                                    {{c10::TensorType::get(), "r"}}});
  Node* add = g.top()->appendNode(
      {"aten::add", "Scalar",
       schemaOf("aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"),
       {relu->output(0), one, one}, {{c10::TensorType::get(), "y"}}});
  g.top()->addReturn(add->output(0));
  g.finalize();

  EXPECT_EQ(g.numValues(), 4u);  // x, 1, r, y
  EXPECT_EQ(g.numNodes(), 2u);
  EXPECT_EQ(add->key(), "aten::add.Scalar");
  EXPECT_EQ(relu->index(), 0u);
  EXPECT_EQ(add->index(), 1u);
  EXPECT_TRUE(verifyGraph(g).empty());
  const std::string text = g.str();
  EXPECT_NE(text.find("graph relu_add(%x_0 : Tensor)"), std::string::npos) << text;
  EXPECT_NE(text.find("%r_2 : Tensor = aten::relu(%x_0)"), std::string::npos) << text;
  EXPECT_NE(text.find("%y_3 : Tensor = aten::add.Scalar(%r_2, %1, %1)"), std::string::npos) << text;
  EXPECT_NE(text.find("return (%y_3)"), std::string::npos) << text;
}

TEST(Graph, SubBlocksArePreOrderedAndScoped) {
  Graph g("if");
  Value* c = g.top()->addParam(c10::BoolType::get(), "c");
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Node* n = g.top()->appendNode({"prim::If", "", nullptr, {c}, {{c10::TensorType::get(), "out"}}});
  Block* then_b = n->addBlock();
  Node* inner = then_b->appendNode({"aten::neg", "", schemaOf("aten::neg(Tensor self) -> Tensor"), {x},
                                    {{c10::TensorType::get(), "n"}}});
  then_b->addReturn(inner->output(0));
  Block* else_b = n->addBlock();
  else_b->addReturn(x);
  Node* after = g.top()->appendNode({"aten::neg", "", schemaOf("aten::neg(Tensor self) -> Tensor"),
                                     {n->output(0)}, {{c10::TensorType::get(), ""}}});
  g.top()->addReturn(after->output(0));
  g.finalize();
  EXPECT_EQ(n->index(), 0u);
  EXPECT_EQ(inner->index(), 1u);
  EXPECT_EQ(after->index(), 2u);
  EXPECT_TRUE(verifyGraph(g).empty()) << g.str();
  EXPECT_NE(g.str().find("block0()"), std::string::npos);

  // A value defined inside a block is not visible after it.
  Graph bad("scope");
  Value* c2 = bad.top()->addParam(c10::BoolType::get(), "c");
  Value* x2 = bad.top()->addParam(c10::TensorType::get(), "x");
  Node* n2 = bad.top()->appendNode({"prim::If", "", nullptr, {c2}, {}});
  Block* b0 = n2->addBlock();
  Node* hidden = b0->appendNode({"aten::neg", "", schemaOf("aten::neg(Tensor self) -> Tensor"), {x2},
                                 {{c10::TensorType::get(), "hidden"}}});
  n2->addBlock();
  bad.top()->addReturn(hidden->output(0));
  bad.finalize();
  auto problems = verifyGraph(bad);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("before it is defined"), std::string::npos) << problems[0];
  EXPECT_THROW(checkGraph(bad), Error);
}

TEST(Graph, VerifierCatchesTypeAndArityErrors) {
  Graph g("types");
  Value* i = g.top()->addParam(c10::IntType::get(), "i");
  Node* relu = g.top()->appendNode({"aten::relu", "", schemaOf("aten::relu(Tensor self) -> Tensor"), {i},
                                    {{c10::TensorType::get(), ""}}});
  Node* loop = g.top()->appendNode({"prim::Loop", "", nullptr, {i}, {}});
  loop->addBlock();
  g.top()->addReturn(relu->output(0));
  g.finalize();
  auto problems = verifyGraph(g);
  ASSERT_EQ(problems.size(), 2u) << g.str();
  EXPECT_NE(problems[0].find("schema wants Tensor"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("prim::Loop arity"), std::string::npos) << problems[1];
}

using testing::errorOf;

// Each edit keeps Value::uses current: appending, nested blocks, replacing an input or
// a return, redirecting all reads, wrapping a group and erasing nodes. The verifier
// recomputes the reads from the graph and checks every list after each step.
TEST(Graph, UseListsFollowEveryEdit) {
  const c10::FunctionSchema* neg_s = schemaOf("aten::neg(Tensor self) -> Tensor");
  const c10::FunctionSchema* mul_s = schemaOf("aten::mul.Tensor(Tensor self, Tensor other) -> Tensor");
  Graph g("uses");
  Value* c = g.top()->addParam(c10::BoolType::get(), "c");
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Node* a = g.top()->appendNode({"aten::neg", "", neg_s, {x}, {{c10::TensorType::get(), "a"}}});
  Node* sq = g.top()->appendNode({"aten::mul", "Tensor", mul_s, {a->output(0), a->output(0)}, {{c10::TensorType::get(), "sq"}}});
  Node* iff = g.top()->appendNode({"prim::If", "", nullptr, {c}, {{c10::TensorType::get(), "out"}}});
  Block* then_b = iff->addBlock();
  Node* inner = then_b->appendNode({"aten::neg", "", neg_s, {sq->output(0)}, {{c10::TensorType::get(), "in"}}});
  then_b->addReturn(inner->output(0));
  iff->addBlock()->addReturn(a->output(0));
  g.top()->addReturn(iff->output(0));
  g.finalize();
  auto ok = [&] { return verifyGraph(g); };
  EXPECT_EQ(ok(), std::vector<std::string>{}) << g.str();
  EXPECT_EQ(a->output(0)->uses().size(), 3u);  // mul twice, the else block's return
  EXPECT_EQ(sq->output(0)->soleUser(), inner);  // a nested read
  EXPECT_EQ(a->output(0)->soleUser(), nullptr);
  EXPECT_EQ(inner->enclosingNodeIn(g.top()), iff);
  EXPECT_EQ(inner->enclosingNodeIn(then_b), inner);
  EXPECT_EQ(a->enclosingNodeIn(then_b), nullptr);

  sq->replaceInput(1, x);
  EXPECT_EQ(a->output(0)->uses().size(), 2u);
  EXPECT_EQ(ok(), std::vector<std::string>{}) << g.str();
  iff->block(1)->replaceReturn(0, x);
  EXPECT_EQ(a->output(0)->soleUser(), sq);
  EXPECT_EQ(ok(), std::vector<std::string>{}) << g.str();

  // Wrapping {a, sq}: the nested read of sq's result now reads the wrapper's output.
  Node* w = g.top()->wrapNodes({a, sq}, "test::group");
  ASSERT_EQ(w->outputs().size(), 1u);
  EXPECT_EQ(w->output(0)->soleUser(), inner);
  EXPECT_EQ(sq->output(0)->uses().size(), 1u);  // the nested block's return
  EXPECT_TRUE(sq->output(0)->uses().front().isReturn());
  EXPECT_EQ(x->uses().size(), 4u);  // the wrapper's input, a's and sq's reads inside, the else return
  EXPECT_EQ(ok(), std::vector<std::string>{}) << g.str();

  // Redirecting every read, then erasing what is left unread.
  EXPECT_EQ(g.replaceAllUses(w->output(0), x), 1u);
  EXPECT_FALSE(w->output(0)->hasUses());
  g.top()->eraseNode(w);
  EXPECT_EQ(x->uses().size(), 2u);  // inner, the else return
  g.finalize();
  EXPECT_EQ(ok(), std::vector<std::string>{}) << g.str();
  // Erasing the If takes its nested reads with it; its result is still returned.
  EXPECT_NE(errorOf([&] { g.top()->eraseNode(iff); }).find("still read"), std::string::npos);
  g.top()->replaceReturn(0, x);
  g.top()->eraseNode(iff);
  EXPECT_EQ(x->uses().size(), 1u);
  EXPECT_EQ(c->uses().size(), 0u);
  g.finalize();
  EXPECT_EQ(ok(), std::vector<std::string>{}) << g.str();
}

}  // namespace
}  // namespace brisk
