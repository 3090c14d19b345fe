#include <ATen/core/List.h>
#include <ATen/core/jit_type.h>

#include <algorithm>

#include "core/common/error.h"
#include "core/frontend/pt2/builder.h"
#include "core/frontend/pt2/pytree.h"

namespace brisk::pt2 {

void Builder::bindInputs() {
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
    Value* v = stateValue(state_name, it->second);
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
  addDimRelationCheck(user_inputs, leaves);
}

// Dims shared between inputs (one Dim for x and y) and derived dims (z is b + 1): one
// node checks them all on every run (brisk::check_input_dims, symbolic_dims.h), as
// ep.module()'s guards do. Not added when every dynamic dim is a symbol of its own.
void Builder::addDimRelationCheck(const std::vector<const Json*>& user_inputs, const std::vector<Value*>& leaves) {
  const Json& tensor_values = objectAt(*graph_, "tensor_values", "graph");
  NodeSpec check;
  check.kind = "brisk::check_input_dims";
  c10::List<std::string> names, exprs;
  std::vector<int64_t> input, dim;
  std::vector<std::string> seen;
  bool related = false;
  for (size_t i = 0; i < user_inputs.size(); ++i) {
    if (unionKind(*user_inputs[i], "a user input") != "as_tensor") continue;
    const std::string name = stringAt(user_inputs[i]->begin().value(), "name", "as_tensor");
    const Json& sizes = arrayAt(objectAt(tensor_values, name.c_str(), "tensor_values"), "sizes", name);
    bool added = false;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (unionKind(sizes[d], name + ".sizes") != "as_expr") continue;
      const std::string expr = stringAt(sizes[d].begin().value(), "expr_str", name + ".sizes");
      related = related || expr.rfind("Symbol(", 0) != 0 || std::find(seen.begin(), seen.end(), expr) != seen.end();
      seen.push_back(expr);
      if (!added) {
        check.inputs.push_back(leaves[i]);
        names.push_back(name);  // as check_input_sizes names it
        added = true;
      }
      input.push_back(static_cast<int64_t>(check.inputs.size() - 1));
      dim.push_back(static_cast<int64_t>(d));
      exprs.push_back(expr);
    }
  }
  if (!related) return;
  Node* n = g_->top()->appendNode(std::move(check));
  n->setAttribute("names", c10::IValue(names));
  n->setAttribute("input", c10::IValue(input));
  n->setAttribute("dim", c10::IValue(dim));
  n->setAttribute("expr", c10::IValue(exprs));
}

std::string Builder::leafName(size_t i, size_t count) const {
  return i < args_out_.size() && count == args_out_.size() ? args_out_[i].name : "input " + std::to_string(i);
}

void Builder::addConstantCheck(const std::string& name, Value* input, const Json& exported) {
  NodeSpec check;
  check.kind = "brisk::check_constant_input";
  check.inputs = {input, args_.value(exported, nullptr)};
  Node* n = g_->top()->appendNode(std::move(check));
  n->setAttribute("input", name);
}

void Builder::addSizeCheck(const std::string& name, Value* input) {
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

c10::TypePtr Builder::leafType(const Json& a) {
  const std::string& kind = unionKind(a, "a user input");
  if (kind == "as_tensor") return c10::TensorType::get();
  if (kind == "as_int" || kind == "as_sym_int") return c10::IntType::get();
  if (kind == "as_float" || kind == "as_sym_float") return c10::FloatType::get();
  if (kind == "as_bool" || kind == "as_sym_bool") return c10::BoolType::get();
  if (kind == "as_string") return c10::StringType::get();
  if (kind == "as_none") return c10::NoneType::get();
  return c10::AnyType::get();
}

}  // namespace brisk::pt2
