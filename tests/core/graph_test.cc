// The IR by hand: construction, dense ids, pre-order numbering, printing and
// verification (good graphs pass; use-before-def, bad arity and type mismatches fail).
#include <ATen/core/jit_type.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "core/common/error.h"
#include "core/graph/graph.h"
#include "core/graph/graph_verifier.h"

namespace brisk {
namespace {

const c10::FunctionSchema* schemaOf(const char* literal) {
  return &torch::jit::getOperatorForLiteral(literal)->schema();
}

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

}  // namespace
}  // namespace brisk
