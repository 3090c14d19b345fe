#include "core/graph/constant_eval.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include "core/graph/effects.h"
#include "core/graph/graph.h"
#include "core/graph/quantized_decomposed.h"

namespace brisk {
namespace {

bool isGenerator(const c10::TypePtr& t) {
  if (t->kind() == c10::TypeKind::OptionalType)
    return t->expectRef<c10::OptionalType>().getElementType()->kind() == c10::TypeKind::GeneratorType;
  return t->kind() == c10::TypeKind::GeneratorType;
}

}  // namespace

std::optional<std::vector<at::Tensor>> evaluateAtLoad(const c10::OperatorName& name, const c10::FunctionSchema& schema,
                                                      const std::vector<Value*>& inputs) {
  if (isQuantizedDecomposed(name.name)) {
    // PT2E's dequantize of an int8 weight: its float weight, computed once (brisk's own
    // implementation, whether or not the dispatcher has PyTorch's Python one).
    const std::string key = name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
    const std::optional<QuantizedOp> op = quantizedOpFor(key);
    if (!op) return std::nullopt;
    std::vector<c10::IValue> args;
    for (const Value* v : inputs) {
      if (!v->isConstant()) return std::nullopt;
      args.push_back(v->constant());
    }
    return std::vector<at::Tensor>{runQuantizedDecomposed(*op, args, key)};
  }
  if (name.name.rfind("aten::", 0) != 0 || schema.returns().empty() || schema.is_mutable() ||
      nondeterministic(name.name))
    return std::nullopt;
  for (const auto& a : schema.arguments())
    if (isGenerator(a.type())) return std::nullopt;
  for (const auto& r : schema.returns())
    if (r.type()->kind() != c10::TypeKind::TensorType) return std::nullopt;
  for (const Value* v : inputs)
    if (!v->isConstant()) return std::nullopt;
  auto op = c10::Dispatcher::singleton().findSchema(name);
  if (!op) return std::nullopt;  // JIT-only scalar ops: cheap anyway
  torch::jit::Stack stack;
  for (const Value* v : inputs) stack.push_back(v->constant());
  op->callBoxed(stack);
  std::vector<at::Tensor> out;
  for (c10::IValue& v : stack) out.push_back(v.toTensor());
  return out;
}

Value* addFoldedConstant(Graph& g, const c10::OperatorName& name, const std::vector<Value*>& inputs,
                         const at::Tensor& t) {
  Value* folded = g.addConstant(t, c10::TensorType::create(t));
  if (isQuantizedDecomposed(name.name)) {
    Graph::FoldedFrom from{name.overload_name.empty() ? name.name : name.name + "." + name.overload_name, {}};
    for (const Value* v : inputs) from.args.push_back(v->constant());
    g.setFoldedFrom(folded, std::move(from));
  }
  return folded;
}

}  // namespace brisk
