#include "core/graph/effects.h"

#include <ATen/core/function_schema.h>

#include <unordered_set>

#include "core/graph/graph.h"

namespace brisk {
namespace {

// Prim ops without a schema whose only effect is their results.
bool purePrim(const std::string& kind) {
  static const std::unordered_set<std::string> kPure = {
      "prim::ListConstruct", "prim::TupleConstruct", "prim::DictConstruct", "prim::ListUnpack",
      "prim::TupleUnpack",   "prim::TupleIndex",     "prim::NumToTensor",   "prim::dtype",
      "prim::device",        "prim::layout",         "prim::shape",         "prim::unchecked_cast",
      "prim::If",            "prim::Loop",           "prim::fork",          "brisk::delegate",
      // A compiled region computes its results from its inputs (call_delegate.h).
      "brisk::call_delegate"};
  return kPure.count(kind) != 0;
}

bool sideEffectOp(const std::string& name) {
  static const std::unordered_set<std::string> kOps = {"aten::warn", "prim::Print", "prim::RaiseException",
                                                       "aten::print", "prim::AutogradAnyNonZero"};
  return kOps.count(name) != 0 || name.find("assert") != std::string::npos || name.rfind("brisk::", 0) == 0;
}

}  // namespace

bool nondeterministic(const std::string& name) {
  static const char* const kPrefixes[] = {"aten::rand",    "aten::normal",         "aten::bernoulli",
                                          "aten::dropout", "aten::native_dropout", "aten::empty",
                                          "aten::new_empty", "aten::multinomial", "aten::uniform",
                                          "aten::exponential", "aten::poisson"};
  for (const char* p : kPrefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

bool hasEffects(const Node& n) {
  // A fork only starts its task; what the task does is the subgraph's.
  if (const Graph* sub = n.subgraph())
    for (const Node* inner : sub->top()->nodes())
      if (hasEffects(*inner)) return true;
  for (const auto& b : n.blocks())
    for (const Node* inner : b->nodes())
      if (hasEffects(*inner)) return true;
  if (n.frontend().effectful) return true;
  if (!n.schema()) return !purePrim(n.kind());
  const std::string& name = n.schema()->name();
  return n.schema()->is_mutable() || nondeterministic(name) || sideEffectOp(name);
}

std::optional<std::vector<const Value*>> writtenInputsOnly(const Node& n) {
  if (n.subgraph() || !n.blocks().empty() || !n.schema()) return std::nullopt;
  if (n.frontend().effectful) return std::nullopt;
  const c10::FunctionSchema& schema = *n.schema();
  if (nondeterministic(schema.name()) || sideEffectOp(schema.name())) return std::nullopt;
  std::vector<const Value*> written;
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size() && i < n.inputs().size(); ++i)
    if (args[i].alias_info() && args[i].alias_info()->isWrite()) written.push_back(n.input(i));
  return written;
}

}  // namespace brisk
