// `_sr_shim.call(static_module, *args, **kwargs)`: calls a torch.StaticModule
// (torch._C._jit_to_static_module) like its own __call__ does, but with the GIL released
// while Static Runtime runs, as the interpreter's and brisk's Python calls do.
//
// Why: StaticModule.__call__ (and runAsync) keep the GIL while the graph runs. On a
// model with prim::fork, a fork task on the inter-op pool that frees a tensor owning a
// Python object needs the GIL, while the caller holds it waiting in aten::wait: a
// deadlock. compare.py hit it on inception_fork whenever the interpreter had run forks
// earlier in the process.
#include <pybind11/pybind11.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/csrc/jit/runtime/static/impl.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace py = pybind11;

// toIValue against Any infers the type inside libtorch_python (the header's inline
// toTypeInferredIValue calls a helper torch 2.x does not export).

PYBIND11_MODULE(_sr_shim, m) {
  m.doc() = "Static Runtime called with the GIL released (tools/bench/compare.py)";
  m.def("call", [](py::handle module, const py::args& args, const py::kwargs& kwargs) {
    auto& sm = py::cast<torch::jit::StaticModule&>(module);
    std::vector<c10::IValue> in;
    in.reserve(args.size());
    for (const py::handle& a : args) in.push_back(torch::jit::toIValue(a, c10::AnyType::get()));
    std::unordered_map<std::string, c10::IValue> kw;
    for (const auto& [k, v] : kwargs) kw.emplace(py::str(k), torch::jit::toIValue(v, c10::AnyType::get()));
    c10::IValue out;
    {
      py::gil_scoped_release nogil;
      out = sm(std::move(in), kw);
    }
    return torch::jit::toPyObject(std::move(out));
  });
}
