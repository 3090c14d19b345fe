#include "core/frontend/pt2/folding.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "core/graph/graph.h"

namespace brisk::pt2 {
namespace {

bool isGenerator(const c10::TypePtr& t) {
  if (t->kind() == c10::TypeKind::OptionalType)
    return t->expectRef<c10::OptionalType>().getElementType()->kind() == c10::TypeKind::GeneratorType;
  return t->kind() == c10::TypeKind::GeneratorType;
}

// Ops whose results are not a function of their inputs' values.
bool nondeterministic(const std::string& name) {
  static const char* const kPrefixes[] = {"aten::rand",    "aten::normal",      "aten::bernoulli",
                                          "aten::dropout", "aten::native_dropout", "aten::empty",
                                          "aten::new_empty", "aten::multinomial"};
  for (const char* p : kPrefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

// Counts every {"as_tensor": {"name": N}} inside `j`; `reader` (may be null) is the node.
void countReads(const Json& j, const Json* reader, TensorReads& reads) {
  if (j.is_object()) {
    auto t = j.find("as_tensor");
    if (t != j.end() && t->is_object() && t->contains("name") && (*t)["name"].is_string()) {
      const std::string& name = (*t)["name"].get_ref<const std::string&>();
      ++reads.count[name];
      if (reader) reads.reader[name] = reader;
      return;
    }
    for (const auto& [k, v] : j.items()) countReads(v, reader, reads);
  } else if (j.is_array()) {
    for (const Json& v : j) countReads(v, reader, reads);
  }
}

}  // namespace

std::optional<std::vector<at::Tensor>> evaluateAtLoad(const c10::OperatorName& name, const c10::FunctionSchema& schema,
                                                      const std::vector<Value*>& inputs) {
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

TensorReads tensorReads(const Json& graph) {
  TensorReads reads;
  if (auto nodes = graph.find("nodes"); nodes != graph.end() && nodes->is_array())
    for (const Json& n : *nodes)
      if (auto in = n.find("inputs"); in != n.end()) countReads(*in, &n, reads);
  if (auto outs = graph.find("outputs"); outs != graph.end()) countReads(*outs, nullptr, reads);
  return reads;
}

std::pair<at::Tensor, at::Tensor> foldBatchNorm(const at::Tensor& w, const at::Tensor& bias, const at::Tensor& gamma,
                                                const at::Tensor& beta, const at::Tensor& mean, const at::Tensor& var,
                                                double eps) {
  at::Tensor scale = at::rsqrt(var + eps);
  if (gamma.defined()) scale = scale * gamma;
  std::vector<int64_t> shape(w.dim(), 1);
  shape[0] = -1;
  at::Tensor new_w = (w * scale.reshape(shape)).contiguous();
  at::Tensor b = bias.defined() ? bias : at::zeros_like(mean);
  at::Tensor new_b = (b - mean) * scale;
  if (beta.defined()) new_b = new_b + beta;
  return {new_w, new_b.contiguous()};
}

}  // namespace brisk::pt2
