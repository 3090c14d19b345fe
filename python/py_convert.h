#pragma once
// Python <-> brisk values for the binding. Tensors, tuples, lists, dicts, numbers,
// strings and None go through libtorch_python's own converters (torch::jit::toIValue /
// toPyObject, the ones TorchScript modules use), so a brisk Module accepts and returns
// exactly what the scripted module does. All functions need the GIL.
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "core/frontend/model_inputs.h"
#include "core/frontend/weights.h"
#include "core/graph/signature.h"

namespace brisk::python {

namespace py = pybind11;

// A call's positional and keyword arguments, typed by the model's signature where an
// argument is declared (so 2 becomes a float for a `float` parameter, [] a typed empty
// list); values the declared type does not accept are converted by inference and left
// for Signature::bind to reject with its own message. Throws brisk::Error for values
// TorchScript cannot represent at all.
ModelInputs toInputs(const Signature& signature, const py::args& args, const py::kwargs& kwargs);

// `inputs` as benchmark()/profile() take it: a tuple or list of positional arguments, a
// dict {"args": [...], "kwargs": {...}} (the zoo's <model>.inputs.pt format), or one
// value that is the only argument.
ModelInputs toInputs(const Signature& signature, const py::handle& inputs);

py::object toPython(const c10::IValue& value);

// A {name: Tensor} mapping (a state_dict) for Module::swapWeights; throws brisk::Error
// naming the entry that is not a str -> Tensor pair.
WeightMap toWeightMap(const py::handle& mapping);

// The name of a Python value's type, for error messages ("int", "Tensor", ...).
std::string typeName(const py::handle& obj);

}  // namespace brisk::python
