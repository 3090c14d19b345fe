#include "core/report/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace brisk::report {

double percentile(std::vector<double> s, double q) {
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(s.begin(), s.end());
  q = std::min(100.0, std::max(0.0, q));
  double pos = q / 100.0 * static_cast<double>(s.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, s.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return s[lo] + (s[hi] - s[lo]) * frac;
}

double median(const std::vector<double>& s) { return percentile(s, 50); }

double mean(const std::vector<double>& s) {
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  return std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
}

LatencySummary summarize(const std::vector<double>& lat) {
  LatencySummary r;
  r.count = lat.size();
  if (lat.empty()) return r;
  r.min_us = *std::min_element(lat.begin(), lat.end());
  r.max_us = *std::max_element(lat.begin(), lat.end());
  r.p50_us = percentile(lat, 50);
  r.p90_us = percentile(lat, 90);
  r.p99_us = percentile(lat, 99);
  r.mean_us = mean(lat);
  r.total_s = std::accumulate(lat.begin(), lat.end(), 0.0) * 1e-6;
  r.throughput = r.total_s > 0 ? static_cast<double>(r.count) / r.total_s : 0;
  return r;
}

}  // namespace brisk::report
