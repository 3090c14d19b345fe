// Escape analysis (core/graph/escape_analysis.h) on hand-built graphs, as its
// specification: a value escapes when the caller may still hold it after the run (a
// graph output, anything an output views or contains, anything stored where the schema
// cannot follow it, a sub-block's result), and only through alias edges: a fresh result
// (neg) does not make its input escape; a view does; an op without a schema is assumed
// to alias every input.
#include <gtest/gtest.h>

#include <vector>

#include "core/graph/escape_analysis.h"
#include "core/graph/graph.h"
#include "tests/core/hand_built_ir.h"

namespace brisk {
namespace {

using testing::neg;
using testing::schemaOf;

Node* view(Graph& g, Value* x, const char* name) {
  Value* size = g.addConstant(c10::IValue(std::vector<int64_t>{-1}), c10::ListType::ofInts());
  return g.top()->appendNode({"aten::view", "", schemaOf("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)"),
                              {x, size}, {{c10::TensorType::get(), name}}});
}

TEST(EscapeAnalysis, OutputsEscapeAndFreshResultsStopIt) {
  Graph g("chain");
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Node* a = neg(g.top(), x, "a");
  Node* b = neg(g.top(), a->output(0), "b");
  g.top()->addReturn(b->output(0));
  g.finalize();
  const std::vector<uint8_t> e = findEscapingValues(g);
  EXPECT_TRUE(e[b->output(0)->id()]);
  EXPECT_FALSE(e[a->output(0)->id()]);  // reusable across runs: nobody holds it afterwards
  EXPECT_FALSE(e[x->id()]);
  EXPECT_TRUE(aliasedInputs(*a).empty());
}

TEST(EscapeAnalysis, AViewOfAnIntermediateMakesItEscape) {
  Graph g("view");
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Node* a = neg(g.top(), x, "a");
  Node* v = view(g, a->output(0), "v");
  g.top()->addReturn(v->output(0));
  g.finalize();
  const std::vector<uint8_t> e = findEscapingValues(g);
  EXPECT_TRUE(e[v->output(0)->id()]);
  EXPECT_TRUE(e[a->output(0)->id()]);  // the output shares its storage
  EXPECT_FALSE(e[x->id()]);
  EXPECT_EQ(aliasedInputs(*v), std::vector<Value*>{a->output(0)});
}

TEST(EscapeAnalysis, AValueStoredInAContainerTheSchemaCannotFollowEscapes) {
  // aten::append stores `el` into the list under a wildcard alias set: the list may be
  // read by anyone, so `el` escapes even though the graph does not return the list.
  Graph g("append");
  Value* list = g.top()->addParam(c10::ListType::ofTensors(), "list");
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Node* el = neg(g.top(), x, "el");
  g.top()->appendNode({"aten::append", "t", schemaOf("aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)"),
                       {list, el->output(0)}, {{c10::ListType::ofTensors(), "appended"}}});
  Node* y = neg(g.top(), x, "y");
  g.top()->addReturn(y->output(0));
  g.finalize();
  const std::vector<uint8_t> e = findEscapingValues(g);
  EXPECT_TRUE(e[el->output(0)->id()]);
  EXPECT_FALSE(e[x->id()]);  // neg made a fresh tensor from it
}

TEST(EscapeAnalysis, AnOpWithoutASchemaAliasesEveryInput) {
  Graph g("tuple");
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Node* a = neg(g.top(), x, "a");
  Node* b = neg(g.top(), x, "b");
  Node* t = g.top()->appendNode({"prim::TupleConstruct", "", nullptr, {a->output(0), b->output(0)},
                                 {{c10::TupleType::create({c10::TensorType::get(), c10::TensorType::get()}), "t"}}});
  g.top()->addReturn(t->output(0));
  g.finalize();
  const std::vector<uint8_t> e = findEscapingValues(g);
  EXPECT_TRUE(e[a->output(0)->id()]);
  EXPECT_TRUE(e[b->output(0)->id()]);
  EXPECT_EQ(aliasedInputs(*t).size(), 2u);
}

TEST(EscapeAnalysis, SubBlockResultsEscape) {
  // out = If(c) { neg(x) } else { x }: the then-block's result escapes (a loop-carried
  // value must not be overwritten while the next iteration reads it), and with it x,
  // which the If node's schema-less edges carry.
  testing::IfGraph m;
  const std::vector<uint8_t> e = findEscapingValues(m.g);
  Value* x = m.x;
  Node *n = m.n, *inner = m.inner;
  EXPECT_TRUE(e[inner->output(0)->id()]);
  EXPECT_TRUE(e[x->id()]);  // returned by the else-block
  EXPECT_FALSE(e[n->output(0)->id()]);  // read only by neg, which makes a fresh tensor
}

}  // namespace
}  // namespace brisk
