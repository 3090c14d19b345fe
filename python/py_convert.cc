#include "python/py_convert.h"

// libtorch_python's converters; the only file of the binding that includes them (they
// pull in most of torch/csrc and take ~10 s to compile).
#include <torch/csrc/jit/python/pybind_utils.h>

#include "core/common/error.h"

namespace brisk::python {
namespace {

bool convertsTo(const py::handle& obj, const c10::TypePtr& type) {
  try {
    torch::jit::toIValue(obj, type);
    return true;
  } catch (const py::error_already_set&) {
    PyErr_Clear();
  } catch (const std::exception&) {
  }
  return false;
}

// The first element of a container that does not convert to its declared element type,
// as a path ("['y']", "[1]") and a description; "" when none is found (the container
// itself is the problem). Runs only once a conversion has failed.
std::string badElement(const py::handle& obj, const c10::Type& declared) {
  auto at = [&](const std::string& path, const py::handle& item, const c10::TypePtr& type) -> std::string {
    if (convertsTo(item, type)) return "";
    const std::string inner = badElement(item, *type);
    if (!inner.empty()) return path + inner;
    return path + " is a Python " + typeName(item) + ", expected " + type->annotation_str();
  };
  if (auto opt = declared.cast<c10::OptionalType>()) return badElement(obj, *opt->getElementType());
  if (auto dict = declared.cast<c10::DictType>(); dict && py::isinstance<py::dict>(obj)) {
    for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(obj)) {
      const std::string key = py::isinstance<py::str>(k) ? "'" + std::string(py::str(k)) + "'" : std::string(py::repr(k));
      if (std::string found = at("[" + key + "]", v, dict->getValueType()); !found.empty()) return found;
    }
  } else if (auto list = declared.cast<c10::ListType>();
             list && (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj))) {
    size_t k = 0;
    for (const py::handle item : obj) {
      if (std::string found = at("[" + std::to_string(k++) + "]", item, list->getElementType()); !found.empty())
        return found;
    }
  } else if (auto tuple = declared.cast<c10::TupleType>(); tuple && py::isinstance<py::tuple>(obj)) {
    py::tuple t = py::reinterpret_borrow<py::tuple>(obj);
    for (size_t k = 0; k < t.size() && k < tuple->elements().size(); ++k) {
      if (std::string found = at("[" + std::to_string(k) + "]", t[k], tuple->elements()[k]); !found.empty())
        return found;
    }
  }
  return "";
}

c10::IValue convert(const py::handle& obj, const c10::TypePtr& declared, const std::string& what) {
  // None stays None whatever the declared type: toIValue would turn it into an
  // undefined Tensor or False, which the interpreter refuses and Signature::bind must too.
  if (obj.is_none()) return c10::IValue();
  if (declared) {
    try {
      return torch::jit::toIValue(obj, declared);
    } catch (const py::error_already_set&) {
      // toIValue leaves a Python error set when a nested cast fails; the inferred
      // conversion below decides what the value is.
      PyErr_Clear();
    } catch (const std::exception&) {
      // Not of the declared type: infer it, so Signature::bind names the mismatch.
    }
  }
  try {
    // toIValue against Any infers the type inside libtorch_python. The header's inline
    // toTypeInferredIValue would call a helper that torch 2.x no longer exports.
    return torch::jit::toIValue(obj, c10::AnyType::get());
  } catch (const py::error_already_set&) {
    PyErr_Clear();
  } catch (const std::exception&) {
    // torch's message here talks about the tracer; ours says what the user passed.
  }
  // A container with mixed element types has no inferred type: name the element that
  // does not fit the declared one.
  if (declared) {
    if (std::string bad = badElement(obj, *declared); !bad.empty()) throw Error(what + ": element " + bad);
  }
  throw Error(what + ": cannot convert a Python " + typeName(obj) + " to a TorchScript value");
}

// The same tensors over new TensorImpls without a Python object (Tensor::detach: the
// storage and version counter are shared, so in-place writes still reach the caller).
// A TensorImpl Python created owns its PyObject once Python drops the object first (as
// the interpreter does to globals at exit), and whoever releases the last C++ reference
// then takes the GIL. brisk's worker threads hold inputs too (a fork task's arguments,
// dropped after its future completes): without the GIL they must never hold Python's.
// In place: the containers are the ones this conversion just made, no one else's.
void dropPyObjects(c10::IValue& v) {
  if (v.isTensor()) {
    if (v.toTensor().defined()) v = v.toTensor().detach();
  } else if (v.isTensorList()) {
    c10::List<at::Tensor> l = v.toTensorList();
    for (size_t i = 0; i < l.size(); ++i) {
      const at::Tensor t = l.get(i);
      if (t.defined()) l.set(i, t.detach());
    }
  } else if (v.isList()) {
    c10::impl::GenericList l = v.toList();
    for (size_t i = 0; i < l.size(); ++i) {
      c10::IValue e = l.get(i);
      dropPyObjects(e);
      l.set(i, std::move(e));
    }
  } else if (v.isTuple()) {
    c10::ivalue::Tuple& t = v.toTupleRef();
    for (size_t i = 0; i < t.elements().size(); ++i) {
      c10::IValue e = t.elements()[i];
      dropPyObjects(e);
      t.unsafeSetElement(i, std::move(e));
    }
  } else if (v.isGenericDict()) {
    for (const auto& entry : v.toGenericDict()) {
      c10::IValue e = entry.value();
      dropPyObjects(e);
      entry.setValue(std::move(e));
    }
  }
}

c10::IValue withoutPyObjects(c10::IValue v) {
  dropPyObjects(v);
  return v;
}

const Argument* findArg(const Signature& signature, const std::string& name) {
  for (const Argument& a : signature.args())
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace

WeightMap toWeightMap(const py::handle& mapping) {
  if (!py::hasattr(mapping, "items") || py::isinstance<py::str>(mapping))
    throw Error("swap_weights: expected a dict of name -> Tensor (a state_dict) or a model file path, got a " +
                typeName(mapping));
  WeightMap out;
  py::object items = mapping.attr("items")();
  for (const py::handle item : items) {
    py::tuple kv = py::reinterpret_borrow<py::tuple>(item);
    if (!py::isinstance<py::str>(kv[0]))
      throw Error("swap_weights: a key is a " + typeName(kv[0]) + ", expected a weight name (str)");
    const std::string name = py::str(kv[0]);
    c10::IValue v = convert(kv[1], nullptr, "swap_weights: weight '" + name + "'");
    if (!v.isTensor()) throw Error("swap_weights: weight '" + name + "' is a " + typeName(kv[1]) + ", not a Tensor");
    out.emplace(name, v.toTensor());
  }
  return out;
}

ModelInputs toInputs(const Signature& signature, const py::args& args, const py::kwargs& kwargs) {
  ModelInputs in;
  const auto& declared = signature.args();
  in.args.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::TypePtr type = i < declared.size() ? declared[i].type : nullptr;
    const std::string what = i < declared.size() ? "argument '" + declared[i].name + "'"
                                                 : "positional argument " + std::to_string(i);
    in.args.push_back(withoutPyObjects(convert(args[i], type, what)));
  }
  for (const auto& [key, value] : kwargs) {
    const std::string name = py::str(key);
    const Argument* a = findArg(signature, name);
    in.kwargs.emplace(name, withoutPyObjects(convert(value, a ? a->type : nullptr, "argument '" + name + "'")));
  }
  return in;
}

ModelInputs toInputs(const Signature& signature, const py::handle& inputs) {
  if (py::isinstance<py::dict>(inputs)) {
    py::dict d = py::reinterpret_borrow<py::dict>(inputs);
    bool zoo_format = d.contains("args") || d.contains("kwargs");
    for (const auto& item : d) {
      const std::string k = py::str(item.first);
      zoo_format = zoo_format && (k == "args" || k == "kwargs");
    }
    if (zoo_format) {
      py::tuple args = d.contains("args") ? py::tuple(d["args"]) : py::tuple();
      py::dict kwargs = d.contains("kwargs") ? py::dict(d["kwargs"]) : py::dict();
      return toInputs(signature, py::args(args), py::kwargs(kwargs));
    }
  }
  if (py::isinstance<py::tuple>(inputs) || py::isinstance<py::list>(inputs))
    return toInputs(signature, py::args(py::tuple(py::reinterpret_borrow<py::object>(inputs))), py::kwargs());
  return toInputs(signature, py::args(py::make_tuple(inputs)), py::kwargs());
}

py::object toPython(const c10::IValue& value) { return torch::jit::toPyObject(value); }

std::string typeName(const py::handle& obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

}  // namespace brisk::python
