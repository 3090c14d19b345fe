#include "core/frontend/pt2/pytree.h"

#include <torch/csrc/jit/runtime/operator.h>

#include "core/common/error.h"
#include "core/frontend/pt2/schema.h"
#include "core/graph/graph.h"

namespace brisk::pt2 {
namespace {

TreeSpec parseNode(const Json& j, const std::string& what) {
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
  for (const Json& c : children) s.children.push_back(parseNode(c, what));
  return s;
}

c10::TypePtr commonType(const std::vector<c10::TypePtr>& types) {
  if (types.empty()) return c10::TensorType::get();
  for (const auto& t : types)
    if (*t != *types[0]) return c10::AnyType::get();
  return types[0];
}

}  // namespace

size_t TreeSpec::numLeaves() const {
  if (kind == Kind::kLeaf) return 1;
  size_t n = 0;
  for (const auto& c : children) n += c.numLeaves();
  return n;
}

TreeSpec parseTreeSpec(const std::string& text, const std::string& what) {
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
  return parseNode(j[1], what);
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
      type = c10::TupleType::create(types);
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
