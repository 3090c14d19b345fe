#include "core/frontend/pt2/arguments.h"

#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>

#include "core/common/error.h"
#include "core/graph/graph.h"

namespace brisk::pt2 {
namespace {

c10::TypePtr unwrapOptional(const c10::TypePtr& t) {
  if (auto o = t->cast<c10::OptionalType>()) return o->getElementType();
  return t;
}

// The schema slot's type with Optional removed; null when unknown.
c10::TypePtr slotType(const c10::Argument* slot) { return slot ? unwrapOptional(slot->type()) : nullptr; }

// A number as the slot wants it.
c10::IValue coerceScalar(c10::IValue v, const c10::Argument* slot) {
  c10::TypePtr t = slotType(slot);
  if (!t) return v;
  if (t->kind() == c10::TypeKind::TensorType) {
    at::Tensor w = c10::scalar_to_tensor(v.toScalar());
    w.unsafeGetTensorImpl()->set_wrapped_number(true);
    return w;
  }
  if (t->kind() == c10::TypeKind::FloatType && v.isInt()) return static_cast<double>(v.toInt());
  if (t->kind() == c10::TypeKind::FloatType && v.isBool()) return v.toBool() ? 1.0 : 0.0;
  if (t->kind() == c10::TypeKind::IntType && v.isBool()) return static_cast<int64_t>(v.toBool());
  return v;
}

c10::IValue device(const Json& body) {
  const std::string type = stringAt(body, "type", "as_device");
  if (type != "cpu") throw Error("device '" + type + "' in the program: brisk runs CPU programs only");
  return c10::Device(c10::kCPU);
}

}  // namespace

std::vector<Value*> ArgumentConverter::bind(const Json& named_args, const c10::FunctionSchema& schema) {
  if (!named_args.is_array()) throw Error("node inputs are not a list");
  std::unordered_map<std::string, const Json*> by_name;
  for (const Json& na : named_args) {
    const std::string name = stringAt(na, "name", "a node input");
    if (!by_name.emplace(name, &at(na, "arg", "input '" + name + "'")).second)
      throw Error("input '" + name + "' is given twice");
  }
  std::vector<Value*> out;
  for (const c10::Argument& a : schema.arguments()) {
    auto it = by_name.find(a.name());
    if (it != by_name.end()) {
      try {
        out.push_back(value(*it->second, &a));
      } catch (const Error& e) {
        throw Error("argument '" + a.name() + "': " + e.message());
      }
      by_name.erase(it);
    } else if (a.default_value()) {
      out.push_back(constant(*a.default_value()));
    } else {
      throw Error("argument '" + a.name() + "' is missing and has no default in " + c10::toString(schema));
    }
  }
  if (!by_name.empty())
    throw Error("input '" + by_name.begin()->first + "' is not an argument of " + c10::toString(schema));
  return out;
}

Value* ArgumentConverter::constant(c10::IValue v) {
  c10::TypePtr t = v.isTensor() ? c10::TensorType::get() : v.type();
  return g_.addConstant(std::move(v), std::move(t));
}

Value* ArgumentConverter::named(const std::string& name) {
  auto it = env_.find(name);
  if (it == env_.end()) throw Error("value '" + name + "' is used before it is defined");
  return it->second;
}

Value* ArgumentConverter::value(const Json& arg, const c10::Argument* slot) {
  const std::string& kind = unionKind(arg, "an argument");
  const Json& body = arg.begin().value();
  if (kind == "as_tensor") return named(stringAt(body, "name", kind));
  if (kind == "as_none") return constant(c10::IValue());
  if (kind == "as_int") return constant(coerceScalar(intOf(body, kind), slot));
  if (kind == "as_float") return constant(coerceScalar(floatOf(body, kind), slot));
  if (kind == "as_bool") {
    if (!body.is_boolean()) throw Error("as_bool is not a boolean");
    return constant(coerceScalar(body.get<bool>(), slot));
  }
  if (kind == "as_string") {
    if (!body.is_string()) throw Error("as_string is not a string");
    return constant(body.get<std::string>());
  }
  if (kind == "as_scalar_type") return constant(static_cast<int64_t>(scalarType(intOf(body, kind))));
  if (kind == "as_memory_format") return constant(static_cast<int64_t>(memoryFormat(intOf(body, kind))));
  if (kind == "as_layout") return constant(static_cast<int64_t>(layout(intOf(body, kind))));
  if (kind == "as_device") return constant(device(body));
  if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") return symbolic(body, kind, slot);
  if (kind == "as_ints" || kind == "as_floats" || kind == "as_bools" || kind == "as_strings" || kind == "as_tensors" ||
      kind == "as_sym_ints" || kind == "as_sym_floats" || kind == "as_sym_bools" || kind == "as_optional_tensors")
    return list(body, kind, slot);
  throw Error("argument kind '" + kind + "' is not supported");
}

Value* ArgumentConverter::symbolic(const Json& body, const std::string& kind, const c10::Argument* slot) {
  const std::string& which = unionKind(body, kind);
  const Json& v = body.begin().value();
  if (which == "as_name") return named(stringAt(body, "as_name", kind));
  if (which == "as_int") return constant(coerceScalar(intOf(v, kind), slot));
  if (which == "as_float") return constant(coerceScalar(floatOf(v, kind), slot));
  if (which == "as_bool" && v.is_boolean()) return constant(coerceScalar(v.get<bool>(), slot));
  throw Error(kind + " '" + which + "' is not supported");
}

Value* ArgumentConverter::list(const Json& items, const std::string& kind, const c10::Argument* slot) {
  if (!items.is_array()) throw Error(kind + " is not a list");
  // The element kind the schema wants; an empty list is serialized as as_tensors
  // whatever its type, so the schema decides.
  c10::TypePtr elem = c10::TensorType::get();
  if (auto lt = slotType(slot) ? slotType(slot)->cast<c10::ListType>() : nullptr) elem = lt->getElementType();
  const c10::TypeKind ek = unwrapOptional(elem)->kind();
  std::vector<Value*> values;
  bool all_constant = true;
  for (const Json& item : items) {
    Value* v;
    if (kind == "as_tensors") v = named(stringAt(item, "name", kind));
    else if (kind == "as_optional_tensors") v = unionKind(item, kind) == "as_none" ? constant(c10::IValue())
                                                                              : named(stringAt(item.begin().value(), "name", kind));
    else if (kind == "as_ints") v = constant(intOf(item, kind));
    else if (kind == "as_floats") v = constant(floatOf(item, kind));
    else if (kind == "as_bools" && item.is_boolean()) v = constant(item.get<bool>());
    else if (kind == "as_strings" && item.is_string()) v = constant(item.get<std::string>());
    else if (kind == "as_sym_ints" || kind == "as_sym_floats" || kind == "as_sym_bools") v = symbolic(item, kind, nullptr);
    else throw Error(kind + " holds an element of the wrong type");
    if (ek == c10::TypeKind::FloatType && v->isConstant() && v->constant().isInt())
      v = constant(static_cast<double>(v->constant().toInt()));
    all_constant = all_constant && v->isConstant();
    values.push_back(v);
  }
  if (all_constant) {  // one constant list, as TorchScript's constant propagation leaves it
    c10::impl::GenericList generic(elem);
    for (Value* v : values) generic.push_back(v->constant());
    c10::IValue iv(generic);
    switch (ek) {  // typed lists, which boxed kernels' toIntList() etc. expect
      case c10::TypeKind::IntType: iv = c10::IValue(c10::impl::toTypedList<int64_t>(std::move(generic))); break;
      case c10::TypeKind::FloatType: iv = c10::IValue(c10::impl::toTypedList<double>(std::move(generic))); break;
      case c10::TypeKind::BoolType: iv = c10::IValue(c10::impl::toTypedList<bool>(std::move(generic))); break;
      default: break;
    }
    return g_.addConstant(std::move(iv), c10::ListType::create(elem));
  }
  NodeSpec n;
  n.kind = "prim::ListConstruct";
  n.inputs = std::move(values);
  n.outputs.emplace_back(c10::ListType::create(elem), "");
  return (block_ ? block_ : g_.top())->appendNode(std::move(n))->output(0);
}

}  // namespace brisk::pt2
