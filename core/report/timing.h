#pragma once
// Wall-clock timing of repeated calls for the reports and benchmarks (steady clock, so
// a clock adjustment during a run cannot produce negative or inflated latencies).
#include <cstdint>
#include <functional>
#include <vector>

namespace brisk::report {

// Per-call latencies (microseconds) of `run`, each call timed on its own: `iters` calls
// when iters > 0, else calls until `seconds` have passed since the first one started
// (always at least one).
std::vector<double> timeCalls(const std::function<void()>& run, int64_t iters, double seconds);

}  // namespace brisk::report
