#include "python/py_module.h"

#include <pybind11/stl.h>

#include <utility>

#include "core/common/error.h"
#include "core/executor/compiled_module.h"
#include "core/report/profile_report.h"
#include "python/gil.h"
#include "python/py_bench.h"
#include "python/py_convert.h"
#include "python/py_launcher.h"
#include "python/py_options.h"
#include "python/py_reports.h"

namespace brisk::python {

PyModule::PyModule(std::shared_ptr<Module> m) : m_(std::move(m)) {}

ModelInputs PyModule::inputsOf(const py::args& args, const py::kwargs& kwargs) const {
  const std::shared_ptr<const CompiledModule> compiled = m_->compiled();
  try {
    return toInputs(compiled->signature(), args, kwargs);
  } catch (const Error& e) {
    throw e.withModel(m_->name());
  }
}

ModelInputs PyModule::inputsOf(const py::handle& inputs) const {
  const std::shared_ptr<const CompiledModule> compiled = m_->compiled();
  try {
    return toInputs(compiled->signature(), inputs);
  } catch (const Error& e) {
    throw e.withModel(m_->name());
  }
}

py::object PyModule::call(const py::args& args, const py::kwargs& kwargs) {
  ModelInputs in = inputsOf(args, kwargs);
  c10::IValue out;
  {
    py_gil::NoGil nogil;
    // Copies: `in` keeps the caller's tensors until the GIL is back. Dropping the last
    // extra reference to a tensor Python created releases its PyObject, which takes
    // the GIL; done inside the run, that would be on brisk's threads, GIL-less.
    out = m_->run(in.args, in.kwargs);
  }
  return toPython(out);
}

PyFuture PyModule::runAsync(const py::args& args, const py::kwargs& kwargs_in) {
  py::dict kwargs = py::reinterpret_borrow<py::dict>(kwargs_in);
  TaskLauncher launcher;
  if (kwargs.contains("launcher")) {
    py::object fn = kwargs["launcher"];
    PyDict_DelItemString(kwargs.ptr(), "launcher");
    if (!fn.is_none()) {
      if (!PyCallable_Check(fn.ptr())) throw Error("run_async: launcher must be callable (it receives a task to run)");
      launcher = toLauncher(fn);
    }
  }
  ModelInputs in = inputsOf(args, py::kwargs(kwargs));
  c10::intrusive_ptr<c10::ivalue::Future> f;
  {
    py_gil::NoGil nogil;
    f = m_->runAsync(in.args, in.kwargs, std::move(launcher));  // copies: see call()
  }
  return PyFuture(std::move(f));
}

py::dict PyModule::stats() const { return statsDict(m_->stats()); }

uint64_t PyModule::weightsVersion() const { return m_->weightsVersion(); }

py::list PyModule::passes() const { return passesList(m_->passReport()); }

py::dict PyModule::weights() const {
  py::dict out;
  for (const WeightInfo& w : m_->weights())
    out[py::str(w.name)] = py::make_tuple(py::tuple(py::cast(w.sizes)), std::string(c10::toString(w.dtype)));
  return out;
}

void PyModule::swapWeights(const py::object& weights) {
  if (py::isinstance<py::str>(weights) || py::hasattr(weights, "__fspath__")) {
    const std::string path = py::str(py::module_::import("os").attr("fspath")(weights));
    py_gil::NoGil nogil;
    m_->swapWeightsFrom(path);
    return;
  }
  WeightMap map = toWeightMap(weights);
  py_gil::NoGil nogil;
  m_->swapWeights(map);
}

py::list PyModule::inspect() const { return kernelReportList(m_->kernelReport()); }

py::dict PyModule::benchmark(const py::handle& inputs, int64_t warmup, int64_t iters) {
  if (warmup < 0) throw Error("benchmark: warmup must be >= 0");
  if (iters < 1) throw Error("benchmark: iters must be >= 1");
  const ModelInputs in = inputsOf(inputs);
  return python::benchmark(*m_, in, warmup, iters);
}

py::dict PyModule::profile(const py::handle& inputs, int64_t iters, const py::object& trace_path) {
  if (iters < 1) throw Error("profile: iters must be >= 1");
  const ModelInputs in = inputsOf(inputs);
  const std::string trace = trace_path.is_none() ? "" : std::string(py::str(trace_path));
  report::ProfileReport r;
  {
    py_gil::NoGil nogil;
    r = report::profileModule(*m_, in, iters, -1, trace);
  }
  return profileDict(r);
}

std::string PyModule::name() const { return m_->name(); }

std::string PyModule::signature() const {
  const std::shared_ptr<const CompiledModule> compiled = m_->compiled();
  return compiled->signature().str();
}

PyModule load(const std::string& path, const py::dict& options, const std::vector<std::string>& extra_plugin_dirs) {
  Options o = toOptions(options);
  // The plugins shipped beside the extension (brisk/libbrisk_ops_cpu.so) come after the
  // caller's own directories.
  for (const auto& d : extra_plugin_dirs) o.plugin_path.push_back(d);
  std::shared_ptr<Module> m;
  {
    py_gil::NoGil nogil;
    m = Module::load(path, o);
  }
  return PyModule(std::move(m));
}

}  // namespace brisk::python
