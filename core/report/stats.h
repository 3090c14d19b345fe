#pragma once
// Latency statistics (percentiles, median, mean, a latency summary) shared by everything
// that reports timings: `brisk bench`, the profile report, the Python binding's
// Module.benchmark() and tools/bench. Plain C++ (no torch, nothing of core), so a
// benchmark binary can use it without linking brisk.
#include <cstddef>
#include <vector>

namespace brisk::report {

// The q-th percentile (0..100) of `samples`, linear interpolation between closest
// ranks (numpy's default). NaN for no samples.
double percentile(std::vector<double> samples, double q);
double median(const std::vector<double>& samples);
double mean(const std::vector<double>& samples);

struct LatencySummary {
  size_t count = 0;
  double min_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, max_us = 0, mean_us = 0;
  double total_s = 0;        // sum of the timed iterations
  double throughput = 0;     // inferences per second = count / total_s
};
LatencySummary summarize(const std::vector<double>& latencies_us);

}  // namespace brisk::report
