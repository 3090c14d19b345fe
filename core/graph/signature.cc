#include "core/graph/signature.h"

#include "core/common/error.h"

namespace brisk {
namespace {

// A cheap structural check of an IValue against a TorchScript type: exact for the
// scalar and tensor kinds; containers are checked one level deep (element kinds of
// lists), which is what the interpreter's own input check catches in practice.
bool matches(const c10::IValue& v, const c10::Type& t) {
  using K = c10::TypeKind;
  switch (t.kind()) {
    case K::AnyType: return true;
    // An undefined at::Tensor is TorchScript's None, not a Tensor: kernels would
    // assert on it.
    case K::TensorType: return v.isTensor() && v.toTensor().defined();
    case K::IntType: return v.isInt();
    case K::FloatType: return v.isDouble() || v.isInt();
    case K::NumberType: return v.isInt() || v.isDouble() || v.isBool();
    case K::BoolType: return v.isBool();
    case K::StringType: return v.isString();
    case K::NoneType: return v.isNone();
    case K::DeviceObjType: return v.isDevice();
    case K::OptionalType:
      return v.isNone() || matches(v, *t.expectRef<c10::OptionalType>().getElementType());
    case K::ListType: {
      if (!v.isList()) return false;
      const auto& elem = *t.expectRef<c10::ListType>().getElementType();
      if (elem.kind() == K::TensorType) return v.isTensorList();
      if (elem.kind() == K::IntType) return v.isIntList();
      if (elem.kind() == K::FloatType) return v.isDoubleList();
      if (elem.kind() == K::BoolType) return v.isBoolList();
      return true;
    }
    case K::TupleType: return v.isTuple() && v.toTupleRef().elements().size() ==
                                              t.expectRef<c10::TupleType>().elements().size();
    case K::DictType: return v.isGenericDict();
    default: return true;  // classes, futures, unions: left to the kernels
  }
}

std::string kindOf(const c10::IValue& v) {
  if (v.isTensor()) {
    const auto& t = v.toTensor();
    if (!t.defined()) return "undefined tensor";
    return std::string(c10::toString(t.scalar_type())) + " tensor of rank " + std::to_string(t.dim());
  }
  return v.tagKind();
}

}  // namespace

Signature::Signature(std::string model, std::vector<Argument> args)
    : model_(std::move(model)),
      args_(std::move(args)),
      declared_(args_.size()),
      learned_specs_(args_.size()) {
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
  if (!matches(v, *args_[i].type))
    throw Error(Error::Where{model_, "", ""},
                "input '" + args_[i].name + "' (#" + std::to_string(i) + "): expected " +
                    args_[i].type->annotation_str() + ", got " + kindOf(v));
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

void Signature::checkTensors(c10::IValue* const* bound) const {
  const bool learned = learned_.load(std::memory_order_acquire);
  for (size_t i = 0; i < args_.size(); ++i) {
    const TensorSpec& s = declared_[i].known || !learned ? declared_[i] : learned_specs_[i];
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

void Signature::learn(const std::vector<TensorSpec>& observed) const {
  if (learned_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(learn_mu_);
  if (learned_.load(std::memory_order_relaxed)) return;
  for (size_t i = 0; i < args_.size() && i < observed.size(); ++i)
    if (!declared_[i].known) learned_specs_[i] = observed[i];
  learned_.store(true, std::memory_order_release);
}

}  // namespace brisk
