#include "core/frontend/pt2/graph_builder.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ScalarOps.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <unordered_set>

#include "core/common/error.h"
#include "core/frontend/pt2/arguments.h"
#include "core/frontend/pt2/folding.h"
#include "core/frontend/pt2/pytree.h"
#include "core/graph/graph.h"

namespace brisk::pt2 {
namespace {

// Python's operator module functions on SymInts, as the JIT's scalar ops of the same
// meaning (their arguments are named `a` and `b` too).
const char* scalarOpFor(const std::string& fn) {
  static const std::unordered_map<std::string, const char*> kOps = {
      {"add", "aten::add"}, {"sub", "aten::sub"},         {"mul", "aten::mul"}, {"floordiv", "aten::floordiv"},
      {"mod", "aten::remainder"}, {"neg", "aten::neg"}, {"eq", "aten::eq"}, {"ne", "aten::ne"},
      {"lt", "aten::lt"},   {"le", "aten::le"},           {"gt", "aten::gt"},   {"ge", "aten::ge"},
  };
  auto it = kOps.find(fn);
  return it == kOps.end() ? nullptr : it->second;
}

// "torch.ops.aten.add.Tensor" -> {"aten::add", "Tensor"}; "_operator.mul" -> {"aten::mul", "int"}.
c10::OperatorName operatorFor(const std::string& target) {
  static const std::string kOps = "torch.ops.", kOperator = "_operator.";
  if (target.rfind("torch.ops.higher_order.", 0) == 0)
    throw Error("higher-order op '" + target + "' is not supported (torch.cond is; while_loop and others are not)");
  if (target.rfind(kOperator, 0) == 0) {
    const char* op = scalarOpFor(target.substr(kOperator.size()));
    if (!op) throw Error("Python operator '" + target + "' is not supported");
    return c10::OperatorName(op, "int");
  }
  if (target.rfind(kOps, 0) != 0) throw Error("call target '" + target + "' is not supported");
  std::string s = target.substr(kOps.size());
  const size_t d1 = s.find('.'), d2 = s.rfind('.');
  if (d1 == std::string::npos || d1 == d2) throw Error("malformed operator target '" + target + "'");
  std::string overload = s.substr(d2 + 1);
  return c10::OperatorName(s.substr(0, d1) + "::" + s.substr(d1 + 1, d2 - d1 - 1),
                           overload == "default" ? "" : overload);
}

// The dispatcher's schema when the dispatcher has the op; else the JIT registry's
// (scalar ops such as aten::mul.int live only there). Both outlive the Module.
const c10::FunctionSchema* schemaFor(const c10::OperatorName& name) {
  if (auto op = c10::Dispatcher::singleton().findSchema(name)) return &op->schema();
  if (auto op = torch::jit::findOperatorFor(name)) return &op->schema();
  return nullptr;
}

class Builder {
 public:
  Builder(const Json& program, const std::unordered_map<std::string, at::Tensor>& state, const std::string& name)
      : state_(state), g_(std::make_shared<Graph>(name)), args_(*g_, env_) {
    const Json& gm = objectAt(program, "graph_module", "the program");
    graph_ = &objectAt(gm, "graph", "graph_module");
    sig_ = &objectAt(gm, "signature", "graph_module");
    module_call_graph_ = &arrayAt(gm, "module_call_graph", "graph_module");
    range_constraints_ = &objectAt(program, "range_constraints", "the program");
  }

  BuiltProgram build(bool fold_batch_norm) {
    block_ = g_->top();
    fold_batch_norm_ = fold_batch_norm;
    reads_ = tensorReads(*graph_);
    for (const Json& node : arrayAt(*graph_, "nodes", "graph")) {
      for (const auto& [tensor, n] : tensorReads(Json{{"nodes", Json::array({node})}})) reader_[tensor] = &node;
    }
    checkDevices();
    checkOutputSpecs();
    bindInputs();
    for (const Json& node : arrayAt(*graph_, "nodes", "graph")) convertNode(node);
    bindOutputs();
    g_->finalize();
    return BuiltProgram{g_, std::move(args_out_)};
  }

 private:
  void checkDevices() {
    for (auto it = objectAt(*graph_, "tensor_values", "graph").begin(); it != objectAt(*graph_, "tensor_values", "graph").end(); ++it) {
      const std::string type = stringAt(objectAt(it.value(), "device", it.key()), "type", it.key() + ".device");
      if (type != "cpu")
        throw Error("tensor '" + it.key() + "' is on device '" + type +
                    "': brisk runs CPU programs only (export the model on CPU)");
    }
  }

  void checkOutputSpecs() {
    for (const Json& spec : arrayAt(*sig_, "output_specs", "signature")) {
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
  }

  const Json& rootSignature() {
    for (const Json& entry : *module_call_graph_)
      if (at(entry, "fqn", "module_call_graph").is_string() && entry["fqn"] == "" && entry["signature"].is_object())
        return entry["signature"];
    throw Error("module_call_graph has no root signature (in_spec / out_spec)");
  }

  void bindInputs() {
    std::vector<const Json*> user_inputs;
    for (const Json& spec : arrayAt(*sig_, "input_specs", "signature")) {
      const std::string& kind = unionKind(spec, "an input spec");
      const Json& body = spec.begin().value();
      if (kind == "user_input") {
        user_inputs.push_back(&at(body, "arg", kind));
        continue;
      }
      // An input export specialized on (a Python number or string passed by the
      // caller): still a leaf of in_spec, so the caller passes it, and the program is
      // only right for the exported value.
      if (kind == "constant_input") {
        user_inputs.push_back(&at(body, "value", kind));
        constant_inputs_.insert(user_inputs.back());
        continue;
      }
      const char* key = kind == "parameter" ? "parameter_name"
                        : kind == "buffer"  ? "buffer_name"
                        : kind == "tensor_constant" ? "tensor_constant_name"
                                                    : nullptr;
      if (!key) throw Error("input kind '" + kind + "' (custom objects, tokens, constant inputs) is not supported");
      const std::string state_name = stringAt(body, key, kind);
      auto it = state_.find(state_name);
      if (it == state_.end()) throw Error(kind + " '" + state_name + "' has no tensor in the archive");
      Value* v = g_->addConstant(it->second, c10::TensorType::create(it->second));
      env_[stringAt(objectAt(body, "arg", kind), "name", kind + ".arg")] = v;
      state_of_[v] = kind + " '" + state_name + "'";
    }
    const Json& root = rootSignature();
    const TreeSpec in = parseTreeSpec(stringAt(root, "in_spec", "the root signature"), "in_spec");
    if (in.kind != TreeSpec::Kind::kTuple || in.children.size() != 2 ||
        in.children[0].kind != TreeSpec::Kind::kTuple || in.children[1].kind != TreeSpec::Kind::kDict)
      throw Error("in_spec is not a (args, kwargs) pair");
    if (in.numLeaves() != user_inputs.size())
      throw Error("in_spec has " + std::to_string(in.numLeaves()) + " leaves but the program " +
                  std::to_string(user_inputs.size()) + " user inputs");
    std::vector<c10::TypePtr> leaf_types;
    for (const Json* a : user_inputs) leaf_types.push_back(leafType(*a));
    std::vector<std::string> names;
    if (auto it = root.find("forward_arg_names"); it != root.end() && it->is_array())
      for (const Json& n : *it) names.push_back(n.is_string() ? n.get<std::string>() : "");
    std::vector<Value*> leaves;
    size_t leaf = 0;
    auto addInput = [&](const std::string& name, const TreeSpec& spec) {
      c10::TypePtr type = structureType(spec, leaf_types, leaf);
      Value* p = g_->top()->addParam(type, name);
      args_out_.push_back(Argument{name, type, std::nullopt});
      emitFlatten(*g_, *g_->top(), p, spec, leaves);
    };
    const TreeSpec& args = in.children[0];
    for (size_t i = 0; i < args.children.size(); ++i)
      addInput(i < names.size() && !names[i].empty() ? names[i] : "arg" + std::to_string(i), args.children[i]);
    const TreeSpec& kwargs = in.children[1];
    for (size_t i = 0; i < kwargs.children.size(); ++i) addInput(kwargs.keys[i], kwargs.children[i]);
    for (size_t i = 0; i < user_inputs.size(); ++i) {
      const Json& a = *user_inputs[i];
      const std::string& kind = unionKind(a, "a user input");
      const Json& body = a.begin().value();
      if (kind == "as_tensor") {
        const std::string name = stringAt(body, "name", kind);
        env_[name] = leaves[i];
        addSizeCheck(name, leaves[i]);
      }
      else if ((kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") && body.contains("as_name"))
        env_[stringAt(body, "as_name", kind)] = leaves[i];
      else if (constant_inputs_.count(&a))
        addConstantCheck(leafName(i, user_inputs.size()), leaves[i], a);
      // Other kinds were specialized at export without a record of the value: the
      // program never reads them.
    }
  }

  // The caller's name for user input `i`: in_spec's leaves are args then kwargs.
  std::string leafName(size_t i, size_t count) const {
    return i < args_out_.size() && count == args_out_.size() ? args_out_[i].name : "input " + std::to_string(i);
  }

  // ep.module() refuses a value other than the exported one; so does brisk, rather than
  // silently computing with the exported value.
  void addConstantCheck(const std::string& name, Value* input, const Json& exported) {
    NodeSpec check;
    check.kind = "brisk::check_constant_input";
    check.inputs = {input, args_.value(exported, nullptr)};
    Node* n = g_->top()->appendNode(std::move(check));
    n->setAttribute("input", name);
  }

  // The sizes the program was exported for: static dims exactly, a dynamic dim that is
  // one symbol within its range_constraints entry. Derived dims (s0 + 1) are left to
  // the kernels.
  void addSizeCheck(const std::string& name, Value* input) {
    const Json& meta = objectAt(objectAt(*graph_, "tensor_values", "graph"), name.c_str(), "tensor_values");
    std::vector<int64_t> lo, hi;
    for (const Json& dim : arrayAt(meta, "sizes", name)) {
      const std::string& kind = unionKind(dim, name + ".sizes");
      if (kind == "as_int") {
        lo.push_back(intOf(dim.begin().value(), name + ".sizes"));
        hi.push_back(lo.back());
        continue;
      }
      lo.push_back(0);
      hi.push_back(-1);
      const std::string expr = stringAt(dim.begin().value(), "expr_str", name + ".sizes");
      static const std::string kSymbol = "Symbol('";
      if (expr.rfind(kSymbol, 0) != 0) continue;
      const std::string symbol = expr.substr(kSymbol.size(), expr.find('\'', kSymbol.size()) - kSymbol.size());
      auto range = range_constraints_->find(symbol);
      if (range == range_constraints_->end()) continue;
      const Json& min = at(*range, "min_val", symbol), &max = at(*range, "max_val", symbol);
      if (!min.is_null()) lo.back() = intOf(min, symbol + ".min_val");
      if (!max.is_null()) hi.back() = intOf(max, symbol + ".max_val");
    }
    NodeSpec check;
    check.kind = "brisk::check_input_sizes";
    check.inputs = {input};
    Node* n = g_->top()->appendNode(std::move(check));
    n->setAttribute("input", name);
    n->setAttribute("min", c10::IValue(lo));
    n->setAttribute("max", c10::IValue(hi));
  }

  static c10::TypePtr leafType(const Json& a) {
    const std::string& kind = unionKind(a, "a user input");
    if (kind == "as_tensor") return c10::TensorType::get();
    if (kind == "as_int" || kind == "as_sym_int") return c10::IntType::get();
    if (kind == "as_float" || kind == "as_sym_float") return c10::FloatType::get();
    if (kind == "as_bool" || kind == "as_sym_bool") return c10::BoolType::get();
    if (kind == "as_string") return c10::StringType::get();
    if (kind == "as_none") return c10::NoneType::get();
    return c10::AnyType::get();
  }

  void convertNode(const Json& node) {
    const std::string target = stringAt(node, "target", "a node");
    const std::string name = stringAt(node, "name", "node '" + target + "'");
    std::string op = target;
    try {
      if (target == "torch.ops.higher_order.cond") return convertCond(node);
      if (auto conv = folded_into_conv_.find(name); conv != folded_into_conv_.end()) {
        env_[stringAt(at(arrayAt(node, "outputs", "node").at(0), "as_tensor", "node"), "name", "node")] =
            env_.at(conv->second);
        return;
      }
      const c10::OperatorName opname = operatorFor(target);
      op = c10::toString(opname);
      const c10::FunctionSchema* schema = schemaFor(opname);
      if (!schema) throw Error("unknown operator " + op + " (not in this libtorch's dispatcher or JIT registry)");
      NodeSpec spec;
      spec.kind = opname.name;
      spec.overload = opname.overload_name;
      spec.schema = schema;
      spec.inputs = args_.bind(arrayAt(node, "inputs", "node"), *schema);
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

  // torch.cond(pred, true_fn, false_fn, operands) -> prim::If with one block per
  // branch. Each branch is a subgraph with its own names, whose inputs are the operands
  // (lifted weights among them); brisk's blocks read outer values directly, so its
  // inputs are bound to the operands' values and its outputs become block returns.
  void convertCond(const Json& node) {
    const Json& ins = arrayAt(node, "inputs", "cond");
    if (ins.size() != 4) throw Error("torch.cond node has " + std::to_string(ins.size()) + " inputs, expected 4");
    Value* pred = args_.value(at(ins[0], "arg", "cond pred"), nullptr);
    if (pred->type()->kind() == c10::TypeKind::TensorType) {
      NodeSpec to_bool;  // a one-element bool tensor, as torch.cond accepts
      to_bool.kind = "aten::Bool";
      to_bool.overload = "Tensor";
      to_bool.schema = schemaFor(c10::OperatorName("aten::Bool", "Tensor"));
      to_bool.inputs = {pred};
      to_bool.outputs.emplace_back(c10::BoolType::get(), "");
      pred = block_->appendNode(std::move(to_bool))->output(0);
    }
    std::vector<Value*> operands;
    const Json& op_arg = at(ins[3], "arg", "cond operands");
    if (unionKind(op_arg, "cond operands") != "as_tensors") throw Error("torch.cond operands are not a tensor list");
    for (const Json& t : op_arg.begin().value()) operands.push_back(args_.value(Json{{"as_tensor", t}}, nullptr));
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

  void buildBranch(const Json& sub, const std::vector<Value*>& operands, Block* block, size_t num_outputs) {
    const auto outer_env = env_;
    Block* outer_block = block_;
    block_ = block;
    args_.setBlock(block);
    const Json& params = arrayAt(sub, "inputs", "cond branch");
    if (params.size() != operands.size())
      throw Error("a torch.cond branch takes " + std::to_string(params.size()) + " inputs, given " +
                  std::to_string(operands.size()) + " operands");
    for (size_t i = 0; i < params.size(); ++i)
      env_[stringAt(objectAt(params[i], "as_tensor", "cond branch input"), "name", "cond branch input")] = operands[i];
    for (const Json& inner : arrayAt(sub, "nodes", "cond branch")) convertNode(inner);
    const Json& results = arrayAt(sub, "outputs", "cond branch");
    if (results.size() != num_outputs)
      throw Error("a torch.cond branch returns " + std::to_string(results.size()) + " values, the node has " +
                  std::to_string(num_outputs));
    for (const Json& r : results) block->addReturn(args_.value(r, nullptr));
    env_ = outer_env;
    block_ = outer_block;
    args_.setBlock(outer_block == g_->top() ? nullptr : outer_block);
  }

  // A node whose every input is a load-time constant becomes constants (folding.h).
  bool foldConstants(const c10::OperatorName& name, const c10::FunctionSchema& schema,
                     const std::vector<Value*>& inputs, const Json& outs) {
    if (outs.size() != schema.returns().size()) return false;
    for (const Json& o : outs)
      if (!o.is_object() || o.size() != 1 || !o.contains("as_tensor")) return false;
    std::optional<std::vector<at::Tensor>> results = evaluateAtLoad(name, schema, inputs);
    if (!results || results->size() != outs.size()) return false;
    for (size_t i = 0; i < outs.size(); ++i) {
      const at::Tensor& t = (*results)[i];
      env_[stringAt(outs[i].begin().value(), "name", "as_tensor")] = g_->addConstant(t, c10::TensorType::create(t));
    }
    g_->addFoldedNode();
    return true;
  }

  // The serialized argument `name` of `node`, or null when the call did not pass it.
  static const Json* namedArg(const Json& node, const std::string& name) {
    for (const Json& a : arrayAt(node, "inputs", "node"))
      if (a.is_object() && a.value("name", "") == name) return &at(a, "arg", name);
    return nullptr;
  }

  // An inference batch norm that is this convolution's only reader folds into the
  // convolution's constant weight and bias (folding.h); the batch norm node is then
  // skipped and its result is the convolution's.
  void foldBatchNormInto(const std::string& target, const Json& node, NodeSpec& conv) {
    const bool convolution = target == "torch.ops.aten.convolution.default";
    if (!fold_batch_norm_ || block_ != g_->top() || (!convolution && target != "torch.ops.aten.conv2d.default")) return;
    const Json& outs = arrayAt(node, "outputs", "node");
    if (outs.size() != 1 || !outs[0].contains("as_tensor")) return;
    const std::string out = stringAt(outs[0]["as_tensor"], "name", "conv output");
    auto reader = reader_.find(out);
    if (reads_[out] != 1 || reader == reader_.end()) return;
    const Json& bn = *reader->second;
    const std::string bn_target = stringAt(bn, "target", "node");
    const bool legit = bn_target == "torch.ops.aten._native_batch_norm_legit_no_training.default";
    if (!legit && bn_target != "torch.ops.aten.batch_norm.default") return;
    const Json* input = namedArg(bn, "input");
    if (!input || !input->contains("as_tensor") || (*input)["as_tensor"].value("name", "") != out) return;
    const Json& bn_outs = arrayAt(bn, "outputs", "node");
    for (size_t i = 1; i < bn_outs.size(); ++i)  // mean/rstd of the legit form: unread
      if (bn_outs[i].contains("as_tensor") && reads_[bn_outs[i]["as_tensor"].value("name", "")] != 0) return;
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

  // In-place writes to a parameter or buffer would change the Module's constants
  // across runs (the default export IR keeps `self.count.add_(1)` in place).
  void checkMutations(const c10::FunctionSchema& schema, const std::vector<Value*>& inputs) {
    for (size_t i = 0; i < schema.arguments().size() && i < inputs.size(); ++i) {
      const auto* alias = schema.arguments()[i].alias_info();
      if (!alias || !alias->isWrite()) continue;
      auto it = state_of_.find(inputs[i]);
      if (it != state_of_.end()) throw Error("program mutates " + it->second + ": not supported");
    }
  }

  void bindOutput(const Json& out, Value* v) {
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

  void bindOutputs() {
    std::vector<Value*> leaves;
    for (const Json& spec : arrayAt(*sig_, "output_specs", "signature"))
      leaves.push_back(args_.value(at(spec.begin().value(), "arg", "user_output"), nullptr));
    const TreeSpec out = parseTreeSpec(stringAt(rootSignature(), "out_spec", "the root signature"), "out_spec");
    if (out.numLeaves() != leaves.size())
      throw Error("out_spec has " + std::to_string(out.numLeaves()) + " leaves but the program " +
                  std::to_string(leaves.size()) + " outputs");
    size_t leaf = 0;
    g_->top()->addReturn(emitUnflatten(*g_, *g_->top(), out, leaves, leaf));
  }

  const std::unordered_map<std::string, at::Tensor>& state_;
  std::shared_ptr<Graph> g_;
  std::unordered_map<std::string, Value*> env_;
  ArgumentConverter args_;
  std::unordered_map<const Value*, std::string> state_of_;
  std::unordered_set<const Json*> constant_inputs_;
  // Conv-batch-norm folding: reads per tensor name, the node reading a name (kept for
  // names read once), and batch norms already folded (their name -> the conv output).
  bool fold_batch_norm_ = false;
  std::unordered_map<std::string, int> reads_;
  std::unordered_map<std::string, const Json*> reader_;
  std::unordered_map<std::string, std::string> folded_into_conv_;
  Block* block_ = nullptr;  // where converted nodes go: the top block or a cond branch
  std::vector<Argument> args_out_;
  const Json* graph_ = nullptr;
  const Json* sig_ = nullptr;
  const Json* module_call_graph_ = nullptr;
  const Json* range_constraints_ = nullptr;
};

}  // namespace

BuiltProgram buildGraph(const Json& program, const std::unordered_map<std::string, at::Tensor>& state,
                        const std::string& graph_name, bool fold_batch_norm) {
  return Builder(program, state, graph_name).build(fold_batch_norm);
}

}  // namespace brisk::pt2
