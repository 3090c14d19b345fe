#pragma once
// brisk.Module: a loaded model (a TorchScript file or a torch.export PT2 archive) as the
// bindings see it. Each method converts its Python arguments against the model's
// signature, runs with the GIL released, and hands the result to the converter or
// report of its job (py_convert.h, py_future.h, py_reports.h, py_bench.h). Its own file
// so that brisk_module.cc holds only the module definition. Every method needs the GIL.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/executor/module.h"
#include "core/frontend/model_inputs.h"
#include "python/py_future.h"

namespace brisk::python {

namespace py = pybind11;

class PyModule {
 public:
  explicit PyModule(std::shared_ptr<Module> m);

  // Conversion errors name the model like brisk's own input errors do.
  ModelInputs inputsOf(const py::args& args, const py::kwargs& kwargs) const;
  ModelInputs inputsOf(const py::handle& inputs) const;

  py::object call(const py::args& args, const py::kwargs& kwargs);
  PyFuture runAsync(const py::args& args, const py::kwargs& kwargs_in);

  py::dict stats() const;
  uint64_t weightsVersion() const;
  // The load-time graph passes in the order they ran.
  py::list passes() const;
  // {name: (shape, dtype name)} of what swap_weights may replace.
  py::dict weights() const;
  void swapWeights(const py::object& weights);
  py::list inspect() const;
  // Timed in C++ without the GIL: what brisk costs without Python's call overhead.
  py::dict benchmark(const py::handle& inputs, int64_t warmup, int64_t iters);
  py::dict profile(const py::handle& inputs, int64_t iters, const py::object& trace_path);

  std::string name() const;
  std::string signature() const;

 private:
  std::shared_ptr<Module> m_;
};

// brisk.load: `options` are brisk.load's keywords (py_options.h); the plugins shipped
// beside the extension (`extra_plugin_dirs`) come after the caller's own plugin_path.
PyModule load(const std::string& path, const py::dict& options, const std::vector<std::string>& extra_plugin_dirs);

}  // namespace brisk::python
