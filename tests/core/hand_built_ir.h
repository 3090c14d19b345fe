#pragma once
// Small IR builders for the tests that state an analysis's rules on hand-built graphs.
#include <ATen/core/jit_type.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <stdexcept>
#include <string>

#include "core/graph/graph.h"

namespace brisk::testing {

inline const c10::FunctionSchema* schemaOf(const char* literal) {
  auto op = torch::jit::getOperatorForLiteral(literal);
  if (!op) throw std::runtime_error(std::string("no operator ") + literal);
  return &op->schema();
}

inline Node* neg(Block* b, Value* x, const char* name) {
  return b->appendNode(
      {"aten::neg", "", schemaOf("aten::neg(Tensor self) -> Tensor"), {x}, {{c10::TensorType::get(), name}}});
}

inline Node* mul(Block* b, Value* x, Value* y, const char* name) {
  return b->appendNode({"aten::mul", "Tensor", schemaOf("aten::mul.Tensor(Tensor self, Tensor other) -> Tensor"),
                        {x, y}, {{c10::TensorType::get(), name}}});
}

// c, x -> out = If(c) { inner = neg(x) } else { x } -> z = neg(out) -> return z; with
// `before` set, y = neg(x) comes first and the then-block negates y instead of x.
struct IfGraph {
  Graph g{"if"};
  Value *c, *x, *y = nullptr;
  Node *n, *inner, *z;
  explicit IfGraph(bool before = false) {
    c = g.top()->addParam(c10::BoolType::get(), "c");
    x = g.top()->addParam(c10::TensorType::get(), "x");
    if (before) y = neg(g.top(), x, "y")->output(0);
    n = g.top()->appendNode({"prim::If", "", nullptr, {c}, {{c10::TensorType::get(), "out"}}});
    Block* then_b = n->addBlock();
    inner = neg(then_b, before ? y : x, "inner");
    then_b->addReturn(inner->output(0));
    Block* else_b = n->addBlock();
    else_b->addReturn(x);
    z = neg(g.top(), n->output(0), "z");
    g.top()->addReturn(z->output(0));
    g.finalize();
  }
};

}  // namespace brisk::testing
