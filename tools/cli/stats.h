#pragma once
// Latency statistics for `brisk bench`.
#include <cstddef>
#include <vector>

namespace brisk::cli {

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

}  // namespace brisk::cli
