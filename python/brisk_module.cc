// The `brisk._brisk` extension: brisk::Module for Python (see python/brisk/__init__.py
// for the public names and python/README.md for usage).
//
// Threading: every call that runs or loads a model releases the GIL, so Python threads
// calling one Module run concurrently (Module::run borrows a Runtime per call). Values
// are converted while holding the GIL. A Python launcher for run_async is called with
// the GIL taken and receives a callable that releases it while the task runs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "python/gil.h"
#include "core/executor/module.h"
#include "core/kernels/plugin_loader.h"
#include "core/kernels/plugin_options.h"
#include "core/common/option_table.h"
#include "core/executor/profiler.h"
#include "core/executor/run_options.h"
#include "python/py_convert.h"
#include "tools/cli/profile_report.h"

namespace brisk::python {
namespace {

namespace py = pybind11;

// brisk.Error (set in PYBIND11_MODULE); a RuntimeError subclass with attributes
// model, node, op and message (the parts of brisk::Error::Where).
PyObject* g_error_type = nullptr;

// --- Options from keyword arguments ---------------------------------------------------

bool asBool(const std::string& key, const py::handle& v) {
  if (!py::isinstance<py::bool_>(v)) throw Error("option '" + key + "' expects a bool, got " + typeName(v));
  return v.cast<bool>();
}

// An int within the option's range (core/common/option_table.cc); Python ints beyond
// int64 are out of range too, not a cast error.
int64_t asInt(const OptionSpec& spec, const py::handle& v) {
  const std::string key = spec.name;
  if (py::isinstance<py::bool_>(v) || !py::isinstance<py::int_>(v))
    throw Error("option '" + key + "' expects an int, got " + typeName(v));
  const py::int_ lo(spec.min), hi(spec.max);
  if (v < lo || v > hi)
    throw Error("option '" + key + "' must be in " + describeRange(spec.min, spec.max) + ", got " +
                py::str(v).cast<std::string>());
  return v.cast<int64_t>();
}

std::string asString(const std::string& key, const py::handle& v) {
  if (!py::isinstance<py::str>(v)) throw Error("option '" + key + "' expects a str, got " + typeName(v));
  return v.cast<std::string>();
}

// A str (one entry) or a list/tuple of str.
std::vector<std::string> asStrings(const std::string& key, const py::handle& v) {
  if (py::isinstance<py::str>(v)) return {v.cast<std::string>()};
  if (!py::isinstance<py::list>(v) && !py::isinstance<py::tuple>(v))
    throw Error("option '" + key + "' expects a str or a list of str");
  std::vector<std::string> out;
  for (const py::handle& item : v) out.push_back(asString(key, item));
  return out;
}

// {"plugin.name": bool | int | str}; Module::load checks names and types against what
// the plugins declare.
PluginOptionMap asPluginOptions(const std::string& key, const py::handle& v) {
  if (!py::isinstance<py::dict>(v)) throw Error("option '" + key + "' expects a dict, got " + typeName(v));
  PluginOptionMap out;
  for (const auto& [k, item] : py::reinterpret_borrow<py::dict>(v)) {
    const std::string name = asString(key + " key", k);
    if (py::isinstance<py::bool_>(item)) out[name] = item.cast<bool>();
    else if (py::isinstance<py::int_>(item)) {
      // Python ints are unbounded: one beyond int64 is out of range, not a cast error.
      if (item < py::int_(INT64_MIN) || item > py::int_(INT64_MAX))
        throw Error("plugin option '" + name + "' must fit in a 64-bit int, got " + py::str(item).cast<std::string>());
      out[name] = item.cast<int64_t>();
    } else if (py::isinstance<py::str>(item)) out[name] = item.cast<std::string>();
    else throw Error("plugin option '" + name + "' expects a bool, int or str, got " + typeName(item));
  }
  return out;
}

OptionValue toOptionValue(const OptionSpec& spec, const py::handle& v) {
  const std::string key = spec.name;
  switch (spec.type()) {
    case OptionType::kBool: return asBool(key, v);
    case OptionType::kInt: return asInt(spec, v);
    case OptionType::kString: return asString(key, v);
    case OptionType::kStringList: return asStrings(key, v);
    case OptionType::kPluginOptions: return asPluginOptions(key, v);
  }
  throw Error("option '" + key + "': unsupported type");
}

// One keyword per brisk::Options field (core/common/option_table.h), same names.
Options toOptions(const py::dict& kwargs) {
  Options o;
  for (const auto& [k, v] : kwargs) {
    const std::string key = py::str(k);
    const OptionSpec* spec = findOption(key);
    if (!spec) throw Error("unknown option '" + key + "' (options: " + optionNames() + ")");
    setOption(o, *spec, toOptionValue(*spec, v));
  }
  return o;
}

// brisk.load's docstring: every option of the table, then what the default plugins
// declare.
std::string optionsDoc(const std::vector<std::string>& plugin_dirs) {
  std::string out = renderOptionsDoc();
  for (const PluginOptionSpec& p : declaredPluginOptions(Options{}.plugins, plugin_dirs))
    out += "  plugin_options[\"" + p.key() + "\"] (" + pluginOptionTypeName(p.default_value) + "): " + p.help + "\n";
  return out;
}

// --- run_async ------------------------------------------------------------------------

// A Python callable as a TaskLauncher. The callable is kept in a shared_ptr whose
// deleter takes the GIL: the launcher may be copied and destroyed on brisk's threads.
TaskLauncher toLauncher(py::object fn) {
  std::shared_ptr<py::object> holder(new py::object(std::move(fn)), [](py::object* o) {
    if (py_gil::exiting()) return;  // left to the exiting process (python/gil.h)
    py_gil::WithGil gil;
    delete o;
  });
  return [holder](Task task) {
    if (py_gil::exiting()) return task();  // no Python left to launch it
    py_gil::WithGil gil;
    auto shared_task = std::make_shared<Task>(std::move(task));
    py::cpp_function run([shared_task] {
      py_gil::NoGil nogil;
      (*shared_task)();
    });
    try {
      (*holder)(run);
    } catch (py::error_already_set& e) {
      // The run fails with the launcher's error, naming the prim::fork node that called
      // it (the future's wait() raises it). A task the launcher did start still finishes
      // on its own; one it did not is dropped with the run's other fork claims.
      const std::string what = std::string(py::str(e.type().attr("__name__"))) + ": " + std::string(py::str(e.value()));
      throw Error("the run_async launcher raised " + what);
    }
  };
}

class PyFuture {
 public:
  explicit PyFuture(c10::intrusive_ptr<c10::ivalue::Future> f) : f_(std::move(f)) {}
  bool done() const { return f_->completed(); }
  py::object wait() {
    {
      py_gil::NoGil nogil;
      f_->wait();
    }
    return value();
  }
  py::object value() {
    if (!f_->completed()) throw Error("run_async: the future is not complete yet (call wait())");
    if (f_->hasError()) std::rethrow_exception(f_->exception_ptr());
    return toPython(f_->constValue());
  }

 private:
  c10::intrusive_ptr<c10::ivalue::Future> f_;
};

// --- Module ---------------------------------------------------------------------------

py::dict statsDict(const ModuleStats& s) {
  py::dict kernels;
  for (int k = 0; k < kNumKernelKinds; ++k) {
    std::string name = kernelKindName(static_cast<KernelKind>(k));
    std::replace(name.begin(), name.end(), '-', '_');
    kernels[py::str(name)] = s.kernels_by_kind[k];
  }
  py::dict memory;
  memory["slab_bytes"] = s.memory.slab_bytes;
  memory["lower_bound"] = s.memory.lower_bound;
  memory["managed_tensors"] = s.memory.managed_tensors;
  memory["plans"] = s.memory.plans;
  memory["replans"] = s.memory.replans;
  memory["evictions"] = s.memory.evictions;
  py::dict pool;
  pool["live"] = s.pool.live;
  pool["idle"] = s.pool.idle;
  pool["peak"] = s.pool.peak;
  pool["created"] = s.pool.created;
  pool["freed"] = s.pool.freed;
  pool["waits"] = s.pool.waits;
  py::dict d;
  d["nodes"] = s.nodes;
  d["kernels"] = kernels;
  d["retained_values"] = s.retained_values;
  d["inplace_nodes"] = s.inplace_nodes;
  d["folded_nodes"] = s.folded_nodes;
  d["managed_values"] = s.managed_values;
  d["memory"] = memory;
  d["pool"] = pool;
  return d;
}

py::dict statDict(const Profiler::Stat& s, int64_t runs, bool per_node) {
  py::dict d;
  if (per_node) {
    d["model"] = s.model;
    d["node"] = s.node;
  }
  d["op"] = s.op;
  d["kind"] = s.kind;
  d["provider"] = s.provider;
  d["calls"] = s.calls;
  d["total_us"] = s.total_us;
  d["us_per_run"] = runs > 0 ? s.total_us / static_cast<double>(runs) : 0.0;
  return d;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

class PyModule {
 public:
  explicit PyModule(std::shared_ptr<Module> m) : m_(std::move(m)) {}

  // Conversion errors name the model like brisk's own input errors do.
  ModelInputs inputsOf(const py::args& args, const py::kwargs& kwargs) const {
    try {
      return toInputs(m_->signature(), args, kwargs);
    } catch (const Error& e) {
      throw e.withModel(m_->name());
    }
  }
  ModelInputs inputsOf(const py::handle& inputs) const {
    try {
      return toInputs(m_->signature(), inputs);
    } catch (const Error& e) {
      throw e.withModel(m_->name());
    }
  }

  py::object call(const py::args& args, const py::kwargs& kwargs) {
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

  PyFuture runAsync(const py::args& args, const py::kwargs& kwargs_in) {
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

  py::dict stats() const { return statsDict(m_->stats()); }
  uint64_t weightsVersion() const { return m_->weightsVersion(); }

  // The load-time graph passes in the order they ran.
  py::list passes() const {
    py::list out;
    for (const PassResult& r : m_->passReport()) {
      py::dict d;
      d["name"] = r.name;
      d["provider"] = r.provider;
      d["changed"] = r.changed;
      d["skipped"] = r.skipped;
      d["us"] = r.micros;
      out.append(d);
    }
    return out;
  }

  // {name: (shape, dtype name)} of what swap_weights may replace.
  py::dict weights() const {
    py::dict out;
    for (const WeightInfo& w : m_->weights())
      out[py::str(w.name)] = py::make_tuple(py::tuple(py::cast(w.sizes)), std::string(c10::toString(w.dtype)));
    return out;
  }

  void swapWeights(const py::object& weights) {
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

  py::list inspect() const {
    py::list out;
    for (const NodeKernelInfo& n : m_->kernelReport()) {
      py::dict d;
      d["index"] = n.node_index;
      d["node"] = n.node;
      d["op"] = n.op;
      d["kind"] = kernelKindName(n.kind);
      d["provider"] = n.provider;
      d["detail"] = n.detail;
      d["depth"] = n.depth;
      out.append(d);
    }
    return out;
  }

  // Timed in C++ without the GIL: what brisk costs without Python's call overhead.
  py::dict benchmark(const py::handle& inputs, int64_t warmup, int64_t iters) {
    if (warmup < 0) throw Error("benchmark: warmup must be >= 0");
    if (iters < 1) throw Error("benchmark: iters must be >= 1");
    const ModelInputs in = inputsOf(inputs);
    std::vector<double> us;
    us.reserve(static_cast<size_t>(iters));
    {
      py_gil::NoGil nogil;
      for (int64_t i = 0; i < warmup; ++i) (void)m_->run(in.args, in.kwargs);
      for (int64_t i = 0; i < iters; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        (void)m_->run(in.args, in.kwargs);
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
    }
    double sum = 0;
    for (double x : us) sum += x;
    py::dict d;
    d["warmup"] = warmup;
    d["iters"] = iters;
    d["p50_us"] = percentile(us, 50);
    d["p90_us"] = percentile(us, 90);
    d["mean_us"] = sum / static_cast<double>(us.size());
    d["min_us"] = *std::min_element(us.begin(), us.end());
    d["max_us"] = *std::max_element(us.begin(), us.end());
    d["samples_us"] = us;  // per inference, in order (for callers' own statistics)
    return d;
  }

  py::dict profile(const py::handle& inputs, int64_t iters, const py::object& trace_path) {
    if (iters < 1) throw Error("profile: iters must be >= 1");
    const ModelInputs in = inputsOf(inputs);
    const std::string trace = trace_path.is_none() ? "" : std::string(py::str(trace_path));
    cli::ProfileReport r;
    {
      py_gil::NoGil nogil;
      r = cli::profileModule(*m_, in, iters, -1, trace);
    }
    py::list nodes, ops;
    for (const auto& s : r.by_node) nodes.append(statDict(s, r.runs, true));
    for (const auto& s : r.by_op) ops.append(statDict(s, r.runs, false));
    py::dict d;
    d["runs"] = r.runs;
    d["node_runs_per_run"] = r.node_runs_per_run;
    d["kernel_us_per_run"] = r.kernel_us_per_run;
    d["kernel_us_mean_per_run"] = r.kernel_us_mean_per_run;
    d["profiled_run_p50_us"] = r.profiled_run_us;
    d["unprofiled_p50_us"] = r.unprofiled_p50_us;
    d["overhead_per_node_ns"] = r.overheadPerNodeNs();
    d["has_forks"] = r.has_forks;
    d["trace_path"] = r.trace_path.empty() ? py::object(py::none()) : py::object(py::str(r.trace_path));
    d["nodes"] = nodes;
    d["ops"] = ops;
    return d;
  }

  std::string name() const { return m_->name(); }
  std::string signature() const { return m_->signature().str(); }

 private:
  std::shared_ptr<Module> m_;
};

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
  m.doc() = "brisk: a static-graph CPU inference runtime for TorchScript models (C++ extension)";
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

  py::class_<PyModule>(m, "Module", "A loaded brisk model; call it like the TorchScript module.")
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
