#pragma once
// Per-node profile of a Module on one input set: `brisk bench --profile [--trace FILE]`
// and the Python binding's Module.profile(), which both print or convert this one
// report. Built on core's Profiler (RunOptions), so the numbers are brisk's own step
// timings, not a sampling profiler's.
//
// Framework overhead per node = (unprofiled p50 run time - profiled kernel time per
// run) / node executions per run (docs/architecture.md, "Overhead"). The kernel
// time comes from profiled runs (each step timed with the steady clock), the run time
// from unprofiled ones, so the profiler's own ~50 ns per node is not charged to brisk.
// For models with forks, kernel time is summed over threads and can exceed the run's
// wall time: the overhead is then not meaningful and is reported as such.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/executor/profiler.h"
#include "core/frontend/model_inputs.h"

namespace brisk {
class Module;
}

namespace brisk::report {

struct ProfileReport {
  std::string model;               // the profiled Module's name (fork children: "<model>/fork#<i>")
  int64_t runs = 0;                // profiled runs
  double node_runs_per_run = 0;    // node executions per run (sub-block nodes count per execution)
  double kernel_us_per_run = 0;    // median over runs of the run's leaf-node time
  double kernel_us_mean_per_run = 0;  // Profiler::kernelMicros() / runs (the tables' 100%)
  double profiled_run_us = 0;      // median wall time of a profiled run (includes the profiler's cost)
  double unprofiled_p50_us = 0;    // given by the caller or measured
  bool has_forks = false;          // events on more than one thread: kernel time sums threads
  std::vector<Profiler::Stat> by_node;  // most expensive first
  std::vector<Profiler::Stat> by_op;
  std::string trace_path;          // Chrome trace of one run, when written
  size_t trace_events = 0;

  // (unprofiled p50 - kernel time per run) / node executions per run, in ns.
  double overheadPerNodeNs() const;
};

// Runs `module` `runs` times with a Profiler (after one unprofiled warm-up run) and
// aggregates per node and per op. Every run is served by the CompiledModule current
// when profiling starts, so a concurrent swapWeights does not split the report.
// `unprofiled_p50_us` < 0: also times `runs` unprofiled runs and takes their median.
// When `trace_path` is not empty, profiles one more run on its own and writes it as
// Chrome trace-event JSON (Perfetto or chrome://tracing; fork tasks appear on their own
// thread rows). Throws brisk::Error.
ProfileReport profileModule(const Module& module, const ModelInputs& inputs, int64_t runs,
                            double unprofiled_p50_us = -1, const std::string& trace_path = "");

// The tables `brisk bench --profile` prints: top `top` nodes and ops by time, each with
// kernel kind and provider, then the overhead line.
void printProfile(std::ostream& os, const ProfileReport& report, size_t top);
// The same as JSON (top `top` rows of each table).
std::string profileJson(const ProfileReport& report, size_t top);

}  // namespace brisk::report
