// The own_constant_outputs pass (builtin_passes.h): the model's outputs never hand the
// caller one of the Module's constant tensors. Every run would return the same tensor,
// and a caller's in-place write to it would change every later run's results (and the
// weights of a model that returns one). Freezing and folding make such outputs common
// enough: a loop that runs zero times returns its folded initial values (a counter's
// zeros(())), an If branch may return a constant, a program may return a weight.
#include <ATen/core/jit_type.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <algorithm>

#include "core/graph/builtin_passes.h"
#include "core/graph/graph.h"

namespace brisk {
namespace {

bool isTensor(const Value* v) { return v->type()->kind() == c10::TypeKind::TensorType; }

// Whether `v` may be a constant at run time: a constant, or what a Loop or If passes
// through from one. Depth-bounded: nesting deeper than that is treated as "may".
bool mayBeConstant(const Value* v, int depth = 0) {
  if (v->isConstant()) return true;
  const Node* n = v->producer();
  if (!n) return false;
  if (depth > 32) return true;
  const size_t i = static_cast<size_t>(std::find(n->outputs().begin(), n->outputs().end(), v) - n->outputs().begin());
  if (n->kind() == "prim::Loop")  // inputs: trip count, condition, initial values; block returns: cond, values
    return mayBeConstant(n->input(2 + i), depth + 1) || mayBeConstant(n->block(0)->returns().at(1 + i), depth + 1);
  if (n->kind() == "prim::If")
    return mayBeConstant(n->block(0)->returns().at(i), depth + 1) ||
           mayBeConstant(n->block(1)->returns().at(i), depth + 1);
  return false;
}

const c10::FunctionSchema* cloneSchema() {
  static const c10::FunctionSchema* s =
      &torch::jit::getOperatorForLiteral(
           "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor")
           ->schema();
  return s;
}

// A clone of `v` placed before `before` (null: at the end of the top block).
Value* cloneOf(Graph& g, Value* v, Node* before) {
  NodeSpec spec{"aten::clone", "", cloneSchema(), {v, g.addConstant(c10::IValue(), c10::NoneType::get())},
                {{v->type(), ""}}};
  return (before ? g.top()->insertNodeBefore(before, std::move(spec)) : g.top()->appendNode(std::move(spec)))
      ->output(0);
}

// Outputs packed into tuples, lists and dicts (pytree outputs, nested).
bool isContainer(const Node& n) {
  return n.kind() == "prim::TupleConstruct" || n.kind() == "prim::ListConstruct" || n.kind() == "prim::DictConstruct";
}

// The tensor elements of `container` (and of the containers inside it) that may be
// constants are read as clones; only by this reader: another may want the constant itself.
size_t ownElements(Graph& g, Node* container) {
  size_t cloned = 0;
  for (size_t i = 0; i < container->inputs().size(); ++i) {
    Value* e = container->input(i);
    if (Node* p = e->producer(); p && isContainer(*p) && p->owningBlock() == g.top()) {
      cloned += ownElements(g, p);
    } else if (isTensor(e) && mayBeConstant(e)) {
      container->replaceInput(i, cloneOf(g, e, container));
      ++cloned;
    }
  }
  return cloned;
}

}  // namespace

size_t ownConstantOutputs(Graph& graph) {
  size_t cloned = 0;
  Block* top = graph.top();
  for (size_t r = 0; r < top->returns().size(); ++r) {
    Value* v = top->returns()[r];
    if (Node* n = v->producer(); n && isContainer(*n)) {
      cloned += ownElements(graph, n);
    } else if (isTensor(v) && mayBeConstant(v)) {
      top->replaceReturn(r, cloneOf(graph, v, nullptr));
      ++cloned;
    }
  }
  return cloned;
}

}  // namespace brisk
