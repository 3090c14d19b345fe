#include "core/graph/inplace_reuse.h"

#include <ATen/core/function_schema.h>

#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/graph/eval_dropout.h"
#include "core/graph/graph.h"

namespace brisk {
namespace {

// Ops whose result is always a new tensor (ATen never returns an input or a view of
// one). Only their outputs may be overwritten: an op like type_as or dropout can hand
// back its input itself (a weight, a graph input) without saying so in its schema.
const std::unordered_set<std::string_view>& freshProducers() {
  static const std::unordered_set<std::string_view> kinds = {
      "aten::conv1d",       "aten::conv2d",      "aten::conv3d",
      "aten::_convolution", "aten::convolution", "aten::linear",
      "aten::addmm",        "aten::mm",          "aten::bmm",
      "aten::baddbmm",      "aten::matmul",      "aten::add",
      "aten::sub",          "aten::mul",         "aten::div",
      "aten::batch_norm",   "aten::layer_norm",  "aten::group_norm",
      "aten::relu",         "aten::hardtanh",    "aten::relu6",
      "aten::clamp",        "aten::sigmoid",     "aten::tanh",
      "aten::gelu",         "aten::silu",        "aten::hardswish",
      "aten::hardsigmoid",  "aten::softmax",     "aten::log_softmax",
      "aten::max_pool2d",   "aten::avg_pool2d",  "aten::adaptive_avg_pool2d",
      "aten::cat",          "aten::mean",        "aten::sum",
      "aten::embedding",    "aten::neg",         "aten::exp",
      "aten::log",          "aten::sqrt",        "aten::rsqrt",
      "aten::abs",
      // core ATen IR (run_decompositions) spellings
      "aten::_softmax",     "aten::_log_softmax", "aten::flip",
      "aten::clone"};
  return kinds;
}

// Elementwise ops whose kernels can write into one of these inputs (by registry key).
const std::unordered_map<std::string_view, std::vector<int>>& reusers() {
  static const std::unordered_map<std::string_view, std::vector<int>> keys = {
      {"aten::relu", {0}},          {"aten::hardtanh", {0}},      {"aten::relu6", {0}},
      {"aten::clamp", {0}},         {"aten::sigmoid", {0}},       {"aten::tanh", {0}},
      {"aten::silu", {0}},          {"aten::hardswish", {0}},     {"aten::hardsigmoid", {0}},
      {"aten::gelu", {0}},          {"aten::add.Tensor", {0, 1}}, {"aten::sub.Tensor", {0, 1}},
      {"aten::mul.Tensor", {0, 1}}, {"aten::div.Tensor", {0, 1}}};
  return keys;
}

// A plain functional schema: no argument or result may alias anything.
bool isFunctional(const c10::FunctionSchema* s) {
  if (!s || s->is_vararg() || s->is_varret()) return false;
  for (const auto& a : s->arguments())
    if (a.alias_info()) return false;
  for (const auto& r : s->returns())
    if (r.alias_info()) return false;
  return true;
}

bool isFreshTensor(const Value* v) {
  const Node* p = v->producer();
  if (!p || p->outputs().size() != 1 || !isFunctional(p->schema())) return false;
  if (!freshProducers().count(p->kind())) return false;
  return v->type()->kind() == c10::TypeKind::TensorType;
}

int markBlock(const Block& b);

int markNode(Node& n) {
  int marked = 0;
  for (const auto& sub : n.blocks()) marked += markBlock(*sub);
  if (n.subgraph()) marked += markInPlaceReuse(*n.subgraph());
  n.setReusableInput(-1);
  // Eval-mode dropout (eval_dropout.h; still here when remove_eval_dropout is
  // disabled) returns its input itself. Marking input 0 lets its kernel hand the input
  // on as ATen does instead of copying: escape analysis and the memory planner then
  // treat the input like the output's view source (its lifetime covers the output's
  // readers). Nothing can write through the alias: an in-place writer needs a fresh,
  // single-use input, and dropout is no fresh producer.
  if (isEvalDropout(n)) {
    n.setReusableInput(0);
    return marked + 1;
  }
  auto it = reusers().find(n.key());
  if (it == reusers().end() || !isFunctional(n.schema()) || n.outputs().size() != 1) return marked;
  for (int i : it->second) {
    if (static_cast<size_t>(i) >= n.inputs().size()) continue;
    const Value* v = n.input(i);
    if (v->uses().size() != 1 || v->owningBlock() != n.owningBlock() || !isFreshTensor(v)) continue;
    n.setReusableInput(i);
    return marked + 1;
  }
  return marked;
}

int markBlock(const Block& b) {
  int marked = 0;
  for (Node* n : b.nodes()) marked += markNode(*n);
  return marked;
}

}  // namespace

int markInPlaceReuse(Graph& graph) {
  return markBlock(*graph.top());
}

}  // namespace brisk
