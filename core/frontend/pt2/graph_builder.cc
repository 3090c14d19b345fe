#include "core/frontend/pt2/graph_builder.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "core/common/error.h"
#include "core/frontend/pt2/builder.h"
#include "core/frontend/pt2/folding.h"
#include "core/frontend/pt2/pytree.h"
#include "core/graph/quantized_decomposed.h"

namespace brisk::pt2 {
namespace {

// Python's operator module functions on SymInts, as the JIT's scalar ops of the same
// meaning (their arguments are named `a` and `b` too).
const char* scalarOpFor(const std::string& fn) {
  static const std::unordered_map<std::string, const char*> kOps = {
      {"add", "aten::add"}, {"sub", "aten::sub"},         {"mul", "aten::mul"}, {"floordiv", "aten::floordiv"},
      {"mod", "aten::remainder"}, {"neg", "aten::neg"}, {"eq", "aten::eq"}, {"ne", "aten::ne"},
      {"lt", "aten::lt"},   {"le", "aten::le"},           {"gt", "aten::gt"},   {"ge", "aten::ge"},
      {"truediv", "aten::div"},
  };
  auto it = kOps.find(fn);
  return it == kOps.end() ? nullptr : it->second;
}

// The JIT overload of a Python scalar op for its arguments' kinds: int, float, or the
// mixed forms (mul.int_float) the JIT registers. SymFloats come from shapes used in
// float arithmetic (`h.shape[0] * 0.01` is sym_float then mul).
std::string scalarOverload(const Json& inputs) {
  std::string overload;
  for (const Json& na : inputs) {
    const std::string& kind = unionKind(at(na, "arg", "a scalar op input"), "a scalar op input");
    const bool is_float = kind == "as_float" || kind == "as_sym_float";
    if (!is_float && kind != "as_int" && kind != "as_sym_int")
      throw Error("a Python scalar op with an argument of kind '" + kind + "' is not supported");
    overload += std::string(overload.empty() ? "" : "_") + (is_float ? "float" : "int");
  }
  if (overload == "int_int" || overload == "float_float") return overload.substr(0, overload.find('_'));
  return overload;
}

}  // namespace

c10::OperatorName operatorFor(const std::string& target, const Json& inputs) {
  static const std::string kOps = "torch.ops.", kOperator = "_operator.";
  if (target.rfind("torch.ops.higher_order.", 0) == 0)
    throw Error("higher-order op '" + target + "' is not supported (torch.cond, while_loop and executorch_call_delegate are)");
  if (target.rfind(kOperator, 0) == 0) {
    const char* op = scalarOpFor(target.substr(kOperator.size()));
    if (!op) throw Error("Python operator '" + target + "' is not supported");
    return c10::OperatorName(op, scalarOverload(inputs));
  }
  if (target == "torch.sym_float") return c10::OperatorName("aten::Float", scalarOverload(inputs));
  if (target.rfind(kOps, 0) != 0) throw Error("call target '" + target + "' is not supported");
  std::string s = target.substr(kOps.size());
  const size_t d1 = s.find('.'), d2 = s.rfind('.');
  if (d1 == std::string::npos || d1 == d2) throw Error("malformed operator target '" + target + "'");
  std::string overload = s.substr(d2 + 1);
  return c10::OperatorName(s.substr(0, d1) + "::" + s.substr(d1 + 1, d2 - d1 - 1),
                           overload == "default" ? "" : overload);
}

// The dispatcher's schema when the dispatcher has the op; else the JIT registry's
// (scalar ops such as aten::mul.int live only there); else brisk's own for PT2E's
// quantize / dequantize ops, which PyTorch defines in Python only
// (core/graph/quantized_decomposed.h). All outlive the Module.
const c10::FunctionSchema* schemaFor(const c10::OperatorName& name) {
  if (auto op = c10::Dispatcher::singleton().findSchema(name)) return &op->schema();
  if (auto op = torch::jit::findOperatorFor(name)) return &op->schema();
  return quantizedDecomposedSchema(name);
}

Builder::Builder(const Json& program, const std::unordered_map<std::string, at::Tensor>& state, const std::string& name)
    : state_(state), g_(std::make_shared<Graph>(name)), args_(*g_, env_) {
  const Json& gm = objectAt(program, "graph_module", "the program");
  graph_ = &objectAt(gm, "graph", "graph_module");
  sig_ = &objectAt(gm, "signature", "graph_module");
  module_call_graph_ = &arrayAt(gm, "module_call_graph", "graph_module");
  if (auto it = gm.find("treespec_namedtuple_fields"); it != gm.end() && !it->is_null()) namedtuple_fields_ = &*it;
  range_constraints_ = &objectAt(program, "range_constraints", "the program");
}

BuiltProgram Builder::build(bool fold_batch_norm) {
  block_ = g_->top();
  fold_batch_norm_ = fold_batch_norm;
  reads_ = tensorReads(*graph_);
  checkTensorValues();
  checkOutputSpecs();
  bindInputs();
  for (const Json& node : arrayAt(*graph_, "nodes", "graph")) convertNode(node);
  bindOutputs();
  g_->finalize();
  return BuiltProgram{g_, std::move(args_out_), std::move(delegate_calls_)};
}

// Every tensor the program records is validated against the schema once, here: what
// the rest of the frontend reads of it (device, dtype, static sizes) is then sound. A
// damaged dtype code or a negative size would otherwise be ignored or turn a check off.
void Builder::checkTensorValues() {
  const Json& values = objectAt(*graph_, "tensor_values", "graph");
  for (auto it = values.begin(); it != values.end(); ++it) {
    const std::string& name = it.key();
    const Json& meta = it.value();
    const std::string type = stringAt(objectAt(meta, "device", name), "type", name + ".device");
    if (type != "cpu")
      throw Error("tensor '" + name + "' is on device '" + type +
                  "': brisk runs CPU programs only (export the model on CPU)");
    const Json& dtype = at(meta, "dtype", name);
    if (!dtype.is_number_integer()) throw Error("tensor '" + name + "': dtype " + dtype.dump() + " is not a dtype code");
    scalarType(dtype.get<int64_t>());  // throws for an unknown code
    for (const Json& dim : arrayAt(meta, "sizes", name)) {
      if (unionKind(dim, name + ".sizes") != "as_int") continue;  // a symbolic size
      if (intOf(dim.begin().value(), name + ".sizes") < 0)
        throw Error("tensor '" + name + "': negative size " + dim.begin().value().dump());
    }
  }
}

void Builder::checkOutputSpecs() {
  const Json& specs = arrayAt(*sig_, "output_specs", "signature");
  for (const Json& spec : specs) {
    const std::string& kind = unionKind(spec, "an output spec");
    const Json& body = spec.begin().value();
    if (kind == "user_output") continue;
    if (kind == "buffer_mutation")
      throw Error("program mutates buffer '" + stringAt(body, "buffer_name", kind) + "': not supported");
    if (kind == "parameter_mutation")
      throw Error("program mutates parameter '" + stringAt(body, "parameter_name", kind) + "': not supported");
    if (kind == "user_input_mutation")
      throw Error("program mutates its input '" + stringAt(body, "user_input_name", kind) + "': not supported");
    throw Error("output kind '" + kind + "' (training or effect token outputs) is not supported");
  }
  // brisk reads what each output is from output_specs; the graph's own output list must
  // say the same (torch refuses a program where they differ).
  const Json& outputs = arrayAt(*graph_, "outputs", "graph");
  if (outputs.size() != specs.size())
    throw Error("the graph has " + std::to_string(outputs.size()) + " outputs but the signature " +
                std::to_string(specs.size()) + " output specs");
  for (size_t i = 0; i < specs.size(); ++i) {
    const Json& arg = at(specs[i].begin().value(), "arg", "an output spec");
    if (outputs[i] != arg)
      throw Error("graph output " + std::to_string(i) + " is " + outputs[i].dump() + " but its output spec says " +
                  arg.dump());
  }
}

const Json& Builder::rootSignature() {
  for (const Json& entry : *module_call_graph_)
    if (at(entry, "fqn", "module_call_graph").is_string() && entry["fqn"] == "" && entry.contains("signature") &&
        entry["signature"].is_object())
      return entry["signature"];
  throw Error("module_call_graph has no root signature (in_spec / out_spec)");
}

void Builder::bindOutputs() {
  std::vector<Value*> leaves;
  for (const Json& spec : arrayAt(*sig_, "output_specs", "signature"))
    leaves.push_back(args_.value(at(spec.begin().value(), "arg", "user_output"), nullptr));
  const TreeSpec out =
      parseTreeSpec(stringAt(rootSignature(), "out_spec", "the root signature"), "out_spec", namedtuple_fields_);
  if (out.numLeaves() != leaves.size())
    throw Error("out_spec has " + std::to_string(out.numLeaves()) + " leaves but the program " +
                std::to_string(leaves.size()) + " outputs");
  size_t leaf = 0;
  g_->top()->addReturn(emitUnflatten(*g_, *g_->top(), out, leaves, leaf));
}

BuiltProgram buildGraph(const Json& program, const std::unordered_map<std::string, at::Tensor>& state,
                        const std::string& graph_name, bool fold_batch_norm) {
  return Builder(program, state, graph_name).build(fold_batch_norm);
}

}  // namespace brisk::pt2
