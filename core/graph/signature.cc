#include "core/graph/signature.h"

#include <sstream>

#include "core/common/error.h"

namespace brisk {
namespace {

// Where inside an input its value stops fitting the declared type: the path from the
// input to that element ("['y']", "[1]"; empty for the input itself) and the element.
struct Mismatch {
  std::string path;
  const c10::IValue* value = nullptr;
  const c10::Type* type = nullptr;
};

bool fail(const c10::IValue& v, const c10::Type& t, Mismatch& m) {
  m.value = &v;
  m.type = &t;
  return false;
}

std::string keyPath(const c10::IValue& key) {
  if (key.isString()) return "['" + key.toStringRef() + "']";
  std::ostringstream os;
  os << key;
  return "[" + os.str() + "]";
}

// A structural check of an IValue against a TorchScript type, into containers: an
// undefined tensor (Python's None) inside a Dict[str, Tensor] or a Tuple would otherwise
// reach a kernel, whose message ("rank 1", "dim 0 is 0") says nothing of the None.
// Classes, futures and unions are left to the kernels.
bool fits(const c10::IValue& v, const c10::Type& t, Mismatch& m) {
  using K = c10::TypeKind;
  switch (t.kind()) {
    case K::AnyType: return true;
    // An undefined at::Tensor is TorchScript's None, not a Tensor: kernels would
    // assert on it.
    case K::TensorType: return (v.isTensor() && v.toTensor().defined()) || fail(v, t, m);
    case K::IntType: return v.isInt() || fail(v, t, m);
    case K::FloatType: return v.isDouble() || v.isInt() || fail(v, t, m);
    case K::NumberType: return v.isInt() || v.isDouble() || v.isBool() || fail(v, t, m);
    case K::BoolType: return v.isBool() || fail(v, t, m);
    case K::StringType: return v.isString() || fail(v, t, m);
    case K::NoneType: return v.isNone() || fail(v, t, m);
    case K::DeviceObjType: return v.isDevice() || fail(v, t, m);
    case K::OptionalType:
      return v.isNone() || fits(v, *t.expectRef<c10::OptionalType>().getElementType(), m);
    case K::ListType: {
      if (!v.isList()) return fail(v, t, m);
      const auto& elem = *t.expectRef<c10::ListType>().getElementType();
      switch (elem.kind()) {
        case K::TensorType: {
          if (!v.isTensorList()) return fail(v, t, m);
          break;  // elements: below (an undefined one is a None)
        }
        case K::IntType: return v.isIntList() || fail(v, t, m);
        case K::FloatType: return v.isDoubleList() || fail(v, t, m);
        case K::BoolType: return v.isBoolList() || fail(v, t, m);
        default: break;
      }
      const auto& items = v.toListRef();
      for (size_t k = 0; k < items.size(); ++k) {
        if (fits(items[k], elem, m)) continue;
        m.path = "[" + std::to_string(k) + "]" + m.path;
        return false;
      }
      return true;
    }
    case K::TupleType: {
      const auto& types = t.expectRef<c10::TupleType>().elements();
      if (!v.isTuple() || v.toTupleRef().elements().size() != types.size()) return fail(v, t, m);
      const auto& items = v.toTupleRef().elements();
      for (size_t k = 0; k < items.size(); ++k) {
        if (fits(items[k], *types[k], m)) continue;
        m.path = "[" + std::to_string(k) + "]" + m.path;
        return false;
      }
      return true;
    }
    case K::DictType: {
      if (!v.isGenericDict()) return fail(v, t, m);
      const auto& value_type = *t.expectRef<c10::DictType>().getValueType();
      for (const auto& entry : v.toGenericDict()) {
        if (fits(entry.value(), value_type, m)) continue;
        m.path = keyPath(entry.key()) + m.path;
        return false;
      }
      return true;
    }
    default: return true;
  }
}

std::string kindOf(const c10::IValue& v) {
  if (v.isTensor()) {
    const auto& t = v.toTensor();
    if (!t.defined()) return "None (an undefined tensor)";
    return std::string(c10::toString(t.scalar_type())) + " tensor of rank " + std::to_string(t.dim());
  }
  return v.tagKind();
}

}  // namespace

Signature::Signature(std::string model, std::vector<Argument> args)
    : model_(std::move(model)),
      args_(std::move(args)),
      declared_(args_.size()) {
  // Traced models carry complete tensor types: fix dtype and rank up front.
  for (size_t i = 0; i < args_.size(); ++i) {
    auto tt = args_[i].type->cast<c10::TensorType>();
    if (tt && tt->scalarType() && tt->dim()) {
      declared_[i] = TensorSpec{true, *tt->scalarType(), static_cast<int64_t>(*tt->dim())};
    }
  }
}

std::string Signature::str() const {
  std::string out = "(";
  for (size_t i = 0; i < args_.size(); ++i) {
    out += (i ? ", " : "") + args_[i].name + ": " + args_[i].type->annotation_str();
    if (args_[i].default_value) {
      std::ostringstream os;
      os << *args_[i].default_value;
      out += " = " + os.str();
    }
  }
  return out + ")";
}

void Signature::checkType(size_t i, const c10::IValue& v) const {
  Mismatch m;
  if (fits(v, *args_[i].type, m)) return;
  const std::string input = "input '" + args_[i].name + "' (#" + std::to_string(i) + "): ";
  if (m.path.empty())
    throw Error(Error::Where{model_, "", ""},
                input + "expected " + args_[i].type->annotation_str() + ", got " + kindOf(v));
  throw Error(Error::Where{model_, "", ""}, input + args_[i].name + m.path + " must be " +
                                               m.type->annotation_str() + ", got " + kindOf(*m.value));
}

void Signature::bind(std::vector<c10::IValue>& args, const Kwargs& kwargs,
                     c10::IValue* const* out) const {
  const size_t n = args_.size();
  if (args.size() > n)
    throw Error(Error::Where{model_, "", ""}, "expected at most " + std::to_string(n) +
                                                  " inputs " + str() + ", got " +
                                                  std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    checkType(i, args[i]);
    *out[i] = std::move(args[i]);
  }
  size_t used_kwargs = 0;
  for (size_t i = args.size(); i < n; ++i) {
    auto it = kwargs.empty() ? kwargs.end() : kwargs.find(args_[i].name);
    if (it != kwargs.end()) {
      checkType(i, it->second);
      *out[i] = it->second;
      ++used_kwargs;
    } else if (args_[i].default_value) {
      *out[i] = *args_[i].default_value;
    } else {
      throw Error(Error::Where{model_, "", ""},
                  "missing input '" + args_[i].name + "' (#" + std::to_string(i) + ") of " +
                      str() + "; got " + std::to_string(args.size()) + " positional inputs");
    }
  }
  if (used_kwargs != kwargs.size()) {
    for (const auto& [name, value] : kwargs) {
      size_t pos = 0;
      while (pos < n && args_[pos].name != name) ++pos;
      if (pos == n)
        throw Error(Error::Where{model_, "", ""},
                    "unknown keyword input '" + name + "'; the model takes " + str());
      throw Error(Error::Where{model_, "", ""},
                  "input '" + name + "' given both positionally and as a keyword");
    }
  }
}

void Signature::checkTensors(c10::IValue* const* bound, const std::vector<TensorSpec>& specs) const {
  for (size_t i = 0; i < args_.size() && i < specs.size(); ++i) {
    const TensorSpec& s = specs[i];
    const c10::IValue& v = *bound[i];
    if (!s.known || !v.isTensor()) continue;
    const at::Tensor& t = v.toTensor();
    if (t.scalar_type() != s.dtype || t.dim() != s.rank)
      throw Error(Error::Where{model_, "", ""},
                  "input '" + args_[i].name + "' (#" + std::to_string(i) + "): expected a " +
                      c10::toString(s.dtype) + " tensor of rank " + std::to_string(s.rank) +
                      ", got a " + kindOf(v));
  }
}

std::vector<TensorSpec> Signature::observe(c10::IValue* const* bound) const {
  std::vector<TensorSpec> out(args_.size());
  for (size_t i = 0; i < args_.size(); ++i) {
    const c10::IValue& v = *bound[i];
    if (v.isTensor() && args_[i].type->kind() == c10::TypeKind::TensorType)
      out[i] = TensorSpec{true, v.toTensor().scalar_type(), v.toTensor().dim()};
  }
  return out;
}

}  // namespace brisk
