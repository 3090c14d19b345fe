#include <ATen/ATen.h>

#include <algorithm>

#include "core/common/error.h"
#include "core/frontend/pt2/builder.h"
#include "core/frontend/pt2/folding.h"
#include "core/graph/quantized_decomposed.h"

namespace brisk::pt2 {

void Builder::convertNode(const Json& node) {
  const std::string target = stringAt(node, "target", "a node");
  const std::string name = stringAt(node, "name", "node '" + target + "'");
  std::string op = target;
  try {
    if (target == "torch.ops.higher_order.cond") return convertCond(node);
    if (target == "torch.ops.higher_order.while_loop") return convertWhileLoop(node);
    if (target == "torch.ops.higher_order.executorch_call_delegate") return convertCallDelegate(node);
    if (auto conv = folded_into_conv_.find(name); conv != folded_into_conv_.end()) {
      env_[stringAt(at(arrayAt(node, "outputs", "node").at(0), "as_tensor", "node"), "name", "node")] =
          env_.at(conv->second);
      return;
    }
    c10::OperatorName opname = operatorFor(target, arrayAt(node, "inputs", "node"));
    op = c10::toString(opname);
    const c10::FunctionSchema* schema = schemaFor(opname);
    if (!schema && isQuantizedDecomposed(opname.name))
      throw Error("unknown operator " + op +
                  ": of PT2E's quantized_decomposed ops brisk runs quantize / dequantize per tensor and per channel "
                  "only (static quantization, as convert_pt2e writes it)");
    if (!schema) throw Error("unknown operator " + op + " (not in this libtorch's dispatcher or JIT registry)");
    NodeSpec spec;
    spec.inputs = args_.bind(arrayAt(node, "inputs", "node"), *schema);
    if (const c10::FunctionSchema* scalar = scalarOverloadFor(opname, *schema, spec.inputs)) {
      opname.overload_name = "Scalar";
      op = c10::toString(opname);
      schema = scalar;
      spec.inputs = args_.bind(arrayAt(node, "inputs", "node"), *schema);
    }
    spec.kind = opname.name;
    spec.overload = opname.overload_name;
    spec.schema = schema;
    checkMutations(*schema, spec.inputs);
    const Json& outs = arrayAt(node, "outputs", "node");
    if (foldConstants(opname, *schema, spec.inputs, outs)) return;
    foldBatchNormInto(target, node, spec);
    const auto& returns = schema->returns();
    if (outs.size() != returns.size() && !(returns.empty() && outs.size() == 1 && outs[0].contains("as_none")))
      throw Error("the node has " + std::to_string(outs.size()) + " outputs but its schema " +
                  std::to_string(returns.size()));
    for (const auto& r : returns) spec.outputs.emplace_back(r.type(), "");
    Node* n = block_->appendNode(std::move(spec));
    for (size_t i = 0; i < returns.size(); ++i) bindOutput(outs[i], n->output(i));
  } catch (const Error& e) {
    throw e.withNode("%" + name, op);
  }
}

// A SymInt / SymFloat (a number known only at run time, such as a dim of a dynamic
// tensor) where the schema wants a Tensor: `x * x.shape[0]` is mul.Tensor(x, sym).
// Eager wraps the number into a 0-dim "wrapped number" tensor, which takes part in
// type promotion as a Python scalar; the op's Scalar overload (mul.Scalar: the same
// arguments, the number as a Scalar) computes the same without a tensor per run.
const c10::FunctionSchema* Builder::scalarOverloadFor(const c10::OperatorName& name,
                                                      const c10::FunctionSchema& schema,
                                                      const std::vector<Value*>& inputs) {
  auto isNumber = [](const Value* v) {
    const c10::TypeKind k = v->type()->kind();
    return !v->isConstant() &&
           (k == c10::TypeKind::IntType || k == c10::TypeKind::FloatType || k == c10::TypeKind::BoolType);
  };
  size_t numbers = 0;
  for (size_t i = 0; i < schema.arguments().size() && i < inputs.size(); ++i) {
    if (schema.arguments()[i].type()->kind() != c10::TypeKind::TensorType || !isNumber(inputs[i])) continue;
    if (i == 0)
      throw Error("argument '" + schema.arguments()[i].name() + "' is a number known only at run time, and " +
                  c10::toString(name) + " has no overload that takes it as a Scalar");
    ++numbers;
  }
  if (numbers == 0 || name.overload_name == "Scalar") return nullptr;
  const c10::FunctionSchema* scalar = schemaFor(c10::OperatorName(name.name, "Scalar"));
  auto sameName = [](const c10::Argument& a, const c10::Argument& b) { return a.name() == b.name(); };
  const bool same_names = scalar && scalar->arguments().size() == schema.arguments().size() &&
                          std::equal(schema.arguments().begin(), schema.arguments().end(),
                                     scalar->arguments().begin(), sameName);
  if (!same_names)
    throw Error("a number known only at run time is passed as a tensor, and " + c10::toString(name) +
                " has no Scalar overload with the same arguments");
  return scalar;
}

void Builder::convertCond(const Json& node) {
  const Json& ins = arrayAt(node, "inputs", "cond");
  if (ins.size() != 4) throw Error("torch.cond node has " + std::to_string(ins.size()) + " inputs, expected 4");
  Value* pred = toBool(args_.value(at(ins[0], "arg", "cond pred"), nullptr), block_);
  std::vector<Value*> operands = tensorList(at(ins[3], "arg", "cond operands"), "torch.cond operands");
  const Json& outs = arrayAt(node, "outputs", "cond");
  NodeSpec branch;
  branch.kind = "prim::If";
  branch.inputs = {pred};
  for (size_t i = 0; i < outs.size(); ++i) branch.outputs.emplace_back(c10::TensorType::get(), "");
  Node* n = block_->appendNode(std::move(branch));
  for (size_t b = 1; b <= 2; ++b) {
    const Json& sub = at(at(at(ins[b], "arg", "cond branch"), "as_graph", "cond branch"), "graph", "cond branch");
    buildBranch(sub, operands, n->addBlock(), outs.size());
  }
  for (size_t i = 0; i < outs.size(); ++i) bindOutput(outs[i], n->output(i));
}

void Builder::buildBranch(const Json& sub, const std::vector<Value*>& operands, Block* block, size_t num_outputs) {
  const std::vector<Value*> results = inlineSubgraph(sub, operands, block, "a torch.cond branch");
  if (results.size() != num_outputs)
    throw Error("a torch.cond branch returns " + std::to_string(results.size()) + " values, the node has " +
                std::to_string(num_outputs));
  for (Value* r : results) block->addReturn(r);
}

std::vector<Value*> Builder::inlineSubgraph(const Json& sub, const std::vector<Value*>& inputs, Block* block,
                                            const std::string& what) {
  const auto outer_env = env_;
  Block* outer_block = block_;
  block_ = block;
  args_.setBlock(block == g_->top() ? nullptr : block);
  const Json& params = arrayAt(sub, "inputs", what);
  if (params.size() != inputs.size())
    throw Error(what + " takes " + std::to_string(params.size()) + " inputs, given " + std::to_string(inputs.size()));
  for (size_t i = 0; i < params.size(); ++i)
    env_[stringAt(objectAt(params[i], "as_tensor", what + " input"), "name", what + " input")] = inputs[i];
  for (const Json& inner : arrayAt(sub, "nodes", what)) convertNode(inner);
  std::vector<Value*> results;
  for (const Json& r : arrayAt(sub, "outputs", what)) results.push_back(args_.value(r, nullptr));
  env_ = outer_env;
  block_ = outer_block;
  args_.setBlock(outer_block == g_->top() ? nullptr : outer_block);
  return results;
}

Value* Builder::toBool(Value* pred, Block* block) {
  const c10::TypeKind kind = pred->type()->kind();
  if (kind == c10::TypeKind::BoolType) return pred;
  // torch.cond takes any truthy predicate: a tensor, and also an int or float (a
  // constant {"as_int": 1} or a SymInt); prim::If needs a bool.
  const char* overload = kind == c10::TypeKind::TensorType ? "Tensor"
                         : kind == c10::TypeKind::IntType  ? "int"
                         : kind == c10::TypeKind::FloatType ? "float"
                                                            : nullptr;
  if (!overload) throw Error("a condition of type " + pred->type()->str() + " (expected a tensor, bool, int or float)");
  if (pred->isConstant() && kind != c10::TypeKind::TensorType)
    return g_->addConstant(c10::IValue(pred->constant().toScalar().toDouble() != 0.0), c10::BoolType::get());
  NodeSpec to_bool;
  to_bool.kind = "aten::Bool";
  to_bool.overload = overload;
  to_bool.schema = schemaFor(c10::OperatorName("aten::Bool", overload));
  to_bool.inputs = {pred};
  to_bool.outputs.emplace_back(c10::BoolType::get(), "");
  return block->appendNode(std::move(to_bool))->output(0);
}

std::vector<Value*> Builder::tensorList(const Json& arg, const std::string& what) {
  if (unionKind(arg, what) != "as_tensors") throw Error(what + " are not a tensor list");
  const Json& items = arg.begin().value();
  if (!items.is_array()) throw Error(what + " are not a list");
  std::vector<Value*> values;
  for (const Json& t : items) values.push_back(args_.value(Json{{"as_tensor", t}}, nullptr));
  return values;
}

bool Builder::foldConstants(const c10::OperatorName& name, const c10::FunctionSchema& schema,
                   const std::vector<Value*>& inputs, const Json& outs) {
  if (outs.size() != schema.returns().size()) return false;
  for (const Json& o : outs)
    if (!o.is_object() || o.size() != 1 || !o.contains("as_tensor")) return false;
  std::optional<std::vector<at::Tensor>> results = evaluateAtLoad(name, schema, inputs);
  if (!results || results->size() != outs.size()) return false;
  for (size_t i = 0; i < outs.size(); ++i)
    env_[stringAt(outs[i].begin().value(), "name", "as_tensor")] = addFoldedConstant(*g_, name, inputs, (*results)[i]);
  g_->addFoldedNode();
  return true;
}

const Json* Builder::namedArg(const Json& node, const std::string& name) {
  for (const Json& a : arrayAt(node, "inputs", "node"))
    if (a.is_object() && a.value("name", "") == name) return &at(a, "arg", name);
  return nullptr;
}

void Builder::foldBatchNormInto(const std::string& target, const Json& node, NodeSpec& conv) {
  const bool convolution = target == "torch.ops.aten.convolution.default";
  if (!fold_batch_norm_ || block_ != g_->top() || (!convolution && target != "torch.ops.aten.conv2d.default")) return;
  const Json& outs = arrayAt(node, "outputs", "node");
  if (outs.size() != 1 || !outs[0].contains("as_tensor")) return;
  const std::string out = stringAt(outs[0]["as_tensor"], "name", "conv output");
  auto reader = reads_.reader.find(out);
  if (reads_.count[out] != 1 || reader == reads_.reader.end()) return;
  const Json& bn = *reader->second;
  const std::string bn_target = stringAt(bn, "target", "node");
  const bool legit = bn_target == "torch.ops.aten._native_batch_norm_legit_no_training.default";
  if (!legit && bn_target != "torch.ops.aten.batch_norm.default") return;
  const Json* input = namedArg(bn, "input");
  if (!input || !input->contains("as_tensor") || (*input)["as_tensor"].value("name", "") != out) return;
  const Json& bn_outs = arrayAt(bn, "outputs", "node");
  for (size_t i = 1; i < bn_outs.size(); ++i)  // mean/rstd of the legit form: unread
    if (bn_outs[i].contains("as_tensor") && reads_.count[bn_outs[i]["as_tensor"].value("name", "")] != 0) return;
  if (convolution && !(conv.inputs[6]->isConstant() && conv.inputs[6]->constant() == c10::IValue(false))) return;
  if (!legit) {
    const Json* training = namedArg(bn, "training");
    if (!training || !training->contains("as_bool") || (*training)["as_bool"] != false) return;
  }
  auto tensor = [&](const char* arg) -> std::optional<at::Tensor> {
    const Json* a = namedArg(bn, arg);
    if (!a || a->contains("as_none")) return at::Tensor();
    Value* v = args_.value(*a, nullptr);
    if (!v->isConstant() || !v->constant().isTensor()) return std::nullopt;
    return v->constant().toTensor();
  };
  auto gamma = tensor("weight"), beta = tensor("bias"), mean = tensor("running_mean"), var = tensor("running_var");
  const Json* eps = namedArg(bn, "eps");
  if (!gamma || !beta || !mean || !var || !mean->defined() || !var->defined() || !eps || !eps->contains("as_float"))
    return;
  if (!conv.inputs[1]->isConstant() || !conv.inputs[2]->isConstant()) return;
  const c10::IValue& w = conv.inputs[1]->constant(), &b = conv.inputs[2]->constant();
  if (!w.isTensor() || !(b.isTensor() || b.isNone())) return;
  auto [new_w, new_b] = foldBatchNorm(w.toTensor(), b.isTensor() ? b.toTensor() : at::Tensor(), *gamma, *beta,
                                      *mean, *var, floatOf(at(*eps, "as_float", "eps"), "eps"));
  conv.inputs[1] = g_->addConstant(new_w, c10::TensorType::create(new_w));
  conv.inputs[2] = g_->addConstant(new_b, c10::TensorType::create(new_b));
  folded_into_conv_[stringAt(bn, "name", "node")] = out;
  g_->addFoldedNode();
}

void Builder::checkMutations(const c10::FunctionSchema& schema, const std::vector<Value*>& inputs) {
  for (size_t i = 0; i < schema.arguments().size() && i < inputs.size(); ++i) {
    const auto* alias = schema.arguments()[i].alias_info();
    if (!alias || !alias->isWrite()) continue;
    auto it = state_of_.find(inputs[i]);
    if (it != state_of_.end()) throw Error("program mutates " + it->second + ": not supported");
  }
}

void Builder::bindOutput(const Json& out, Value* v) {
  const std::string& kind = unionKind(out, "a node output");
  const Json& body = out.begin().value();
  if (kind == "as_tensor") {
    env_[stringAt(body, "name", kind)] = v;
  } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
    if (body.contains("as_name")) env_[stringAt(body, "as_name", kind)] = v;
  } else if (kind == "as_tensors") {
    if (!body.is_array()) throw Error("as_tensors output is not a list");
    NodeSpec unpack;
    unpack.kind = "prim::ListUnpack";
    unpack.inputs = {v};
    for (size_t i = 0; i < body.size(); ++i) unpack.outputs.emplace_back(c10::TensorType::get(), "");
    Node* n = block_->appendNode(std::move(unpack));
    for (size_t i = 0; i < body.size(); ++i) env_[stringAt(body[i], "name", kind)] = n->output(i);
  } else if (kind != "as_none") {
    throw Error("output kind '" + kind + "' is not supported");
  }
}

}  // namespace brisk::pt2
