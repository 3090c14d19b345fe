// The `brisk._brisk` extension: brisk::Module for Python (see python/brisk/__init__.py
// for the public names and python/README.md for usage). This file is only the module
// definition: the exception type and the bindings. Each job behind them has its own
// file: py_options.h (brisk.load's keywords), py_module.h (brisk.Module),
// py_launcher.h and py_future.h (run_async), py_reports.h (stats, passes, inspect,
// profile), py_bench.h (benchmark), py_convert.h (values).
//
// Threading: every call that runs or loads a model releases the GIL, so Python threads
// calling one Module run concurrently (Module::run borrows a Runtime per call). Values
// are converted while holding the GIL. A Python launcher for run_async is called with
// the GIL taken and receives a callable that releases it while the task runs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <c10/util/Exception.h>

#include <exception>
#include <string>

#include "core/common/error.h"
#include "python/gil.h"
#include "python/py_future.h"
#include "python/py_module.h"
#include "python/py_options.h"

namespace brisk::python {
namespace {

// brisk.Error (set in PYBIND11_MODULE); a RuntimeError subclass with attributes
// model, node, op and message (the parts of brisk::Error::Where).
PyObject* g_error_type = nullptr;

void raiseBriskError(const Error& e) {
  py::object exc = py::reinterpret_borrow<py::object>(g_error_type)(e.what());
  exc.attr("message") = e.message();
  exc.attr("model") = e.where().model;
  exc.attr("node") = e.where().node;
  exc.attr("op") = e.where().op;
  PyErr_SetObject(g_error_type, exc.ptr());
}

}  // namespace
}  // namespace brisk::python

PYBIND11_MODULE(_brisk, m) {
  namespace py = pybind11;
  using namespace brisk::python;
  m.doc() =
      "brisk: a static-graph CPU inference runtime for TorchScript models and torch.export PT2 archives "
      "(C++ extension)";
  // Keeps brisk's threads away from the GIL once Python exits (python/gil.h).
  py::module_::import("atexit").attr("register")(py::cpp_function([] { brisk::py_gil::onPythonExit(); }));

  static py::exception<brisk::Error> error_type(m, "Error", PyExc_RuntimeError);
  g_error_type = error_type.ptr();
  // brisk::Error keeps its one-line message; other C++ exceptions reaching Python from
  // brisk's calls (c10 errors from a conversion, say) become brisk.Error as well, with
  // the backtrace c10 appends cut off.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const brisk::Error& e) {
      raiseBriskError(e);
    } catch (const c10::Error& e) {
      raiseBriskError(brisk::Error(brisk::describeException(e)));
    }
  });

  py::class_<PyFuture>(m, "Future", "The result of Module.run_async: wait() or value().")
      .def("wait", &PyFuture::wait, "Blocks until the run finished; returns its output or raises brisk.Error.")
      .def("value", &PyFuture::value, "The output of a finished run (raises brisk.Error for a failed one).")
      .def("done", &PyFuture::done);

  py::class_<PyModule>(m, "Module",
                       "A loaded brisk model, from a TorchScript file or a torch.export PT2 archive; call it like "
                       "the module it was saved from.")
      .def("__call__", &PyModule::call)
      .def("run", &PyModule::call, "Same as calling the module.")
      .def("run_async", &PyModule::runAsync,
           "run_async(*args, launcher=None, **kwargs) -> Future. launcher: a callable that receives each "
           "prim::fork task (a no-argument callable) and must run it once, on any thread; None: brisk's "
           "inter-op arena. A launcher that raises fails the run with its exception (wait() raises it as "
           "brisk.Error).")
      .def("stats", &PyModule::stats)
      .def("passes", &PyModule::passes,
           "The load-time graph passes in the order they ran: name, provider, nodes changed, skipped, us.")
      .def("weights", &PyModule::weights,
           "{name: (shape, dtype)} of the model file's named weights: what swap_weights may replace.")
      .def("swap_weights", &PyModule::swapWeights, py::arg("weights"),
           "swap_weights(state_dict | path): replaces named weights for every later run (a dict name -> Tensor, "
           "or every weight of another file of the same model). Checks names, shapes and dtypes first; "
           "runs in flight finish on the old weights. Costs about one load.")
      .def_property_readonly("weights_version", [](const PyModule& self) { return self.weightsVersion(); })
      .def("inspect", &PyModule::inspect)
      .def("benchmark", &PyModule::benchmark, py::arg("inputs"), py::arg("warmup") = 10, py::arg("iters") = 100)
      .def("profile", &PyModule::profile, py::arg("inputs"), py::arg("iters") = 20, py::arg("trace_path") = py::none())
      .def_property_readonly("name", &PyModule::name)
      .def_property_readonly("signature", &PyModule::signature)
      .def("__repr__", [](const PyModule& self) { return "<brisk.Module " + self.name() + self.signature() + ">"; });

  m.def("options_doc", &optionsDoc, py::arg("plugin_dirs"), "The keyword options of brisk.load, one line each (from brisk's option table).");
  m.def("load", &load, py::arg("path"), py::arg("options"), py::arg("extra_plugin_dirs"));
}
