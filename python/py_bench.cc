#include "python/py_bench.h"

#include <pybind11/stl.h>

#include <vector>

#include "core/report/stats.h"
#include "core/report/timing.h"
#include "python/gil.h"

namespace brisk::python {

py::dict benchmark(const Module& module, const ModelInputs& inputs, int64_t warmup, int64_t iters) {
  std::vector<double> us;
  {
    py_gil::NoGil nogil;
    for (int64_t i = 0; i < warmup; ++i) (void)module.run(inputs.args, inputs.kwargs);
    us = report::timeCalls([&] { (void)module.run(inputs.args, inputs.kwargs); }, iters, 0);
  }
  const report::LatencySummary s = report::summarize(us);
  py::dict d;
  d["warmup"] = warmup;
  d["iters"] = iters;
  d["p50_us"] = s.p50_us;
  d["p90_us"] = s.p90_us;
  d["mean_us"] = s.mean_us;
  d["min_us"] = s.min_us;
  d["max_us"] = s.max_us;
  d["samples_us"] = us;  // per inference, in order (for callers' own statistics)
  return d;
}

}  // namespace brisk::python
