#include "core/report/timing.h"

#include <chrono>

namespace brisk::report {

std::vector<double> timeCalls(const std::function<void()>& run, int64_t iters, double seconds) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> latencies_us;
  const auto start = Clock::now();
  for (int64_t i = 0;; ++i) {
    if (iters > 0 && i >= iters) break;
    const auto t0 = Clock::now();
    run();
    const auto t1 = Clock::now();
    latencies_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (iters <= 0 && std::chrono::duration<double>(t1 - start).count() >= seconds) break;
  }
  return latencies_us;
}

}  // namespace brisk::report
