#pragma once
// `brisk bench --serial-baseline` and `brisk bench --callers N`: the inter-op parallelism
// benchmarks, after the timed rounds.
//
// --serial-baseline: brisk as configured vs the same model in brisk's serial executor
//   (max_parallel_ops = 1, prim::fork tasks run inline on the caller's thread), rotating
//   rounds in one process: the speed-up forks and the parallel executor buy.
// --callers N: throughput of N threads calling Module::run on one Module (each with its
//   pooled Runtime) vs one thread, rotating rounds; both as inferences per second.
#include <cstdint>
#include <iosfwd>
#include <string>

#include "core/frontend/model_inputs.h"
#include "core/common/options.h"

namespace brisk {
class Module;
}

namespace brisk::cli {

class FlagParser;

struct ThreadingBenchFlags {
  bool serial_baseline = false;  // --serial-baseline
  int64_t callers = 0;           // --callers N (0 = off)

  void addTo(FlagParser& p);
};

// Each returns its results as JSON (for `bench --json`) and prints a table to `os`.
std::string runSerialBaseline(const Module& module, const std::string& model_path, const Options& options,
                              const ModelInputs& inputs, int64_t rounds, double seconds, std::ostream& os);
std::string runCallersThroughput(const Module& module, const ModelInputs& inputs, int64_t callers, int64_t rounds,
                                 double seconds, std::ostream& os);

}  // namespace brisk::cli
