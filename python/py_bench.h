#pragma once
// Module.benchmark(): a model timed in C++ with the GIL released, so the numbers are
// what brisk costs without Python's call overhead. Its own file because it is the one
// loop of the binding that runs a model many times; the timing and the statistics are
// core/report's (timeCalls, summarize), the ones `brisk bench` uses. Needs the GIL
// (released inside while the model runs).
#include <pybind11/pybind11.h>

#include <cstdint>

#include "core/executor/module.h"
#include "core/frontend/model_inputs.h"

namespace brisk::python {

namespace py = pybind11;

// `warmup` untimed runs, then `iters` runs each timed on its own (the caller checks
// warmup >= 0 and iters >= 1). {"warmup", "iters", "p50_us", "p90_us", "mean_us",
// "min_us", "max_us", "samples_us" (per run, in order)}.
py::dict benchmark(const Module& module, const ModelInputs& inputs, int64_t warmup, int64_t iters);

}  // namespace brisk::python
