#include "core/frontend/pt2/pytree.h"

#include <torch/csrc/jit/runtime/operator.h>

#include "core/common/error.h"
#include "core/frontend/pt2/schema.h"
#include "core/graph/graph.h"

namespace brisk::pt2 {
namespace {

TreeSpec parseNode(const Json& j, const std::string& what, const Json* namedtuple_fields) {
  TreeSpec s;
  const Json& type = at(j, "type", what);
  const Json& children = arrayAt(j, "children_spec", what);
  if (type.is_null()) {
    if (!children.empty()) throw Error(what + ": a leaf with children");
    return s;
  }
  if (!type.is_string()) throw Error(what + ": 'type' is not a string");
  const std::string& t = type.get_ref<const std::string&>();
  if (t == "builtins.tuple" || t == "collections.namedtuple" || t == "torch.fx.immutable_collections.immutable_list") {
    s.kind = t == "builtins.tuple" || t == "collections.namedtuple" ? TreeSpec::Kind::kTuple : TreeSpec::Kind::kList;
    if (t == "collections.namedtuple" && at(j, "context", what).is_string()) {
      s.type_name = j["context"].get<std::string>();
      if (namedtuple_fields && namedtuple_fields->is_object() && namedtuple_fields->contains(s.type_name)) {
        const Json& names = at(namedtuple_fields->at(s.type_name), "field_names", "treespec_namedtuple_fields");
        if (!names.is_array() || names.size() != children.size())
          throw Error(what + ": namedtuple '" + s.type_name + "' has " + std::to_string(children.size()) +
                      " children but its recorded field names are " + names.dump());
        for (const Json& n : names) {
          if (!n.is_string()) throw Error(what + ": namedtuple '" + s.type_name + "' has a field name " + n.dump());
          s.field_names.push_back(n.get<std::string>());
        }
      }
    }
  } else if (t == "builtins.list") {
    s.kind = TreeSpec::Kind::kList;
  } else if (t == "builtins.dict" || t == "collections.OrderedDict") {
    s.kind = TreeSpec::Kind::kDict;
    Json keys;
    const std::string context = stringAt(j, "context", what);
    checkJsonDepth(context, what + ": dict context");
    try {
      keys = Json::parse(context);
    } catch (const Json::exception& e) {
      throw Error(what + ": dict context is not JSON: " + e.what());
    }
    if (!keys.is_array() || keys.size() != children.size()) throw Error(what + ": dict keys do not match its children");
    for (const Json& k : keys) {
      if (!k.is_string()) throw Error(what + ": only dicts with string keys are supported, got key " + k.dump());
      s.keys.push_back(k.get<std::string>());
    }
  } else {
    throw Error(what + ": pytree node type '" + t + "' is not supported");
  }
  for (const Json& c : children) s.children.push_back(parseNode(c, what, namedtuple_fields));
  return s;
}

c10::TypePtr commonType(const std::vector<c10::TypePtr>& types) {
  if (types.empty()) return c10::TensorType::get();
  for (const auto& t : types)
    if (*t != *types[0]) return c10::AnyType::get();
  return types[0];
}

// ep.module() returns the exported namedtuple class; the caller gets a namedtuple of the
// same name and fields (as from a TorchScript model), not a plain tuple.
c10::TypePtr namedTupleType(const TreeSpec& spec, const std::vector<c10::TypePtr>& types) {
  std::string name = spec.type_name;
  // A qualified name has non-empty atoms: "a..b" or "Out." would not parse.
  const bool parsable = !name.empty() && name.front() != '.' && name.back() != '.' && name.find("..") == std::string::npos;
  if (!parsable) name = "NamedTuple";
  return c10::TupleType::createNamed(c10::QualifiedName(name), spec.field_names, types);
}

}  // namespace

size_t TreeSpec::numLeaves() const {
  if (kind == Kind::kLeaf) return 1;
  size_t n = 0;
  for (const auto& c : children) n += c.numLeaves();
  return n;
}

TreeSpec parseTreeSpec(const std::string& text, const std::string& what, const Json* namedtuple_fields) {
  checkJsonDepth(text, what);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    throw Error(what + " is not JSON: " + e.what());
  }
  if (!j.is_array() || j.size() != 2 || !j[0].is_number_integer())
    throw Error(what + " is not a [version, spec] pair");
  if (j[0].get<int64_t>() != 1) throw Error(what + ": pytree spec version " + j[0].dump() + " is not supported");
  return parseNode(j[1], what, namedtuple_fields);
}

c10::TypePtr structureType(const TreeSpec& spec, const std::vector<c10::TypePtr>& leaf_types, size_t& leaf) {
  if (spec.kind == TreeSpec::Kind::kLeaf) {
    if (leaf >= leaf_types.size()) throw Error("the pytree spec has more leaves than the program has values");
    return leaf_types[leaf++];
  }
  std::vector<c10::TypePtr> types;
  for (const auto& c : spec.children) types.push_back(structureType(c, leaf_types, leaf));
  switch (spec.kind) {
    case TreeSpec::Kind::kTuple: return c10::TupleType::create(std::move(types));
    case TreeSpec::Kind::kList: return c10::ListType::create(commonType(types));
    default: return c10::DictType::create(c10::StringType::get(), commonType(types));
  }
}

void emitFlatten(Graph& g, Block& block, Value* v, const TreeSpec& spec, std::vector<Value*>& leaves) {
  if (spec.kind == TreeSpec::Kind::kLeaf) {
    leaves.push_back(v);
    return;
  }
  std::vector<Value*> parts;
  if (spec.kind == TreeSpec::Kind::kDict) {
    const c10::TypePtr elem = v->type()->expectRef<c10::DictType>().getValueType();
    // The lookups below would ignore keys the program does not take; ep.module() refuses
    // them, and so does brisk (core/kernels/input_check_kernels.cc).
    NodeSpec check;
    check.kind = "brisk::check_dict_keys";
    check.inputs = {v};
    Node* c = block.appendNode(std::move(check));
    c->setAttribute("input", v->name());
    c->setAttribute("keys", c10::IValue(c10::List<std::string>(spec.keys)));
    for (const std::string& key : spec.keys) {
      NodeSpec n;
      n.kind = "aten::__getitem__";
      n.overload = "Dict_str";
      // The JIT's operator, so the fallback can run it when no plugin serves it.
      static const std::shared_ptr<torch::jit::Operator> op =
          torch::jit::findOperatorFor(c10::OperatorName("aten::__getitem__", "Dict_str"));
      n.schema = op ? &op->schema() : nullptr;
      n.inputs = {v, g.addConstant(c10::IValue(key), c10::StringType::get())};
      n.outputs.emplace_back(elem, key);
      parts.push_back(block.appendNode(std::move(n))->output(0));
    }
  } else {
    NodeSpec n;
    n.kind = spec.kind == TreeSpec::Kind::kTuple ? "prim::TupleUnpack" : "prim::ListUnpack";
    n.inputs = {v};
    const c10::TypePtr list_elem =
        spec.kind == TreeSpec::Kind::kList ? v->type()->expectRef<c10::ListType>().getElementType() : nullptr;
    for (size_t i = 0; i < spec.children.size(); ++i)
      n.outputs.emplace_back(list_elem ? list_elem : v->type()->expectRef<c10::TupleType>().elements()[i],
                             v->name() + "_" + std::to_string(i));
    Node* node = block.appendNode(std::move(n));
    parts = node->outputs();
  }
  for (size_t i = 0; i < spec.children.size(); ++i) emitFlatten(g, block, parts[i], spec.children[i], leaves);
}

Value* emitUnflatten(Graph& g, Block& block, const TreeSpec& spec, const std::vector<Value*>& leaves, size_t& leaf) {
  if (spec.kind == TreeSpec::Kind::kLeaf) {
    if (leaf >= leaves.size()) throw Error("the out_spec has more leaves than the program has outputs");
    return leaves[leaf++];
  }
  std::vector<Value*> parts;
  std::vector<c10::TypePtr> types;
  for (const auto& c : spec.children) {
    parts.push_back(emitUnflatten(g, block, c, leaves, leaf));
    types.push_back(parts.back()->type());
  }
  NodeSpec n;
  c10::TypePtr type;
  switch (spec.kind) {
    case TreeSpec::Kind::kTuple:
      n.kind = "prim::TupleConstruct";
      type = spec.field_names.empty() ? c10::TupleType::create(types) : namedTupleType(spec, types);
      n.inputs = parts;
      break;
    case TreeSpec::Kind::kList:
      n.kind = "prim::ListConstruct";
      type = c10::ListType::create(commonType(types));
      n.inputs = parts;
      break;
    default:
      n.kind = "prim::DictConstruct";
      type = c10::DictType::create(c10::StringType::get(), commonType(types));
      for (size_t i = 0; i < parts.size(); ++i) {  // key, value, key, value, ...
        n.inputs.push_back(g.addConstant(c10::IValue(spec.keys[i]), c10::StringType::get()));
        n.inputs.push_back(parts[i]);
      }
  }
  n.outputs.emplace_back(type, "");
  return block.appendNode(std::move(n))->output(0);
}

}  // namespace brisk::pt2
