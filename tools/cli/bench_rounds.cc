#include "tools/cli/bench_rounds.h"

#include <ostream>

#include "core/report/format.h"
#include "core/report/json.h"
#include "core/report/stats.h"
#include "core/report/timing.h"
#include "tools/cli/timing.h"

namespace brisk::cli {

using report::LatencySummary;
using report::fixed;
using report::median;
using report::padLeft;
using report::padRight;
using report::timeCalls;
namespace json = report::json;

void warmUp(Executor& e, int64_t warmup) {
  if (warmup >= 0) {
    for (int64_t i = 0; i < warmup; ++i) e.run();
    e.warmup_iters = warmup;
    return;
  }
  const double start = nowSeconds();
  int64_t i = 0;
  while (i < 3 || nowSeconds() - start < 0.1) {
    e.run();
    ++i;
  }
  e.warmup_iters = i;
}

std::vector<std::string> runRounds(const std::vector<Executor*>& execs, const Executor* interpreter, int64_t rounds,
                                   int64_t iters, double seconds, std::ostream& os) {
  const Executor& brisk = *execs[0];
  std::vector<std::string> rounds_json;
  os << padRight("round", 7) << padRight("first", 13) << padLeft("brisk_p50_us", 14);
  if (interpreter) os << padLeft("interp_p50_us", 15) << padLeft("ratio", 8);
  os << "\n";
  for (int64_t r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < execs.size(); ++k) {
      Executor& e = *execs[(static_cast<size_t>(r) + k) % execs.size()];
      const std::vector<double> block = timeCalls(e.run, iters, seconds);
      e.round_p50_us.push_back(median(block));
      e.latencies_us.insert(e.latencies_us.end(), block.begin(), block.end());
    }
    const std::string& first = execs[static_cast<size_t>(r) % execs.size()]->name;
    const double b = brisk.round_p50_us.back();
    os << padRight(std::to_string(r + 1), 7) << padRight(first, 13) << padLeft(fixed(b, 1), 14);
    json::Object round;
    round.add("first", json::str(first)).add("brisk_p50_us", json::num(b));
    if (interpreter) {
      const double i = interpreter->round_p50_us.back();
      os << padLeft(fixed(i, 1), 15) << padLeft(fixed(i / b, 3), 8);
      round.add("interpreter_p50_us", json::num(i)).add("ratio", json::num(i / b));
    }
    os << "\n";
    rounds_json.push_back(round.done());
  }
  return rounds_json;
}

std::vector<double> roundRatios(const Executor& slower, const Executor& faster) {
  std::vector<double> ratios;
  for (size_t r = 0; r < slower.round_p50_us.size() && r < faster.round_p50_us.size(); ++r)
    ratios.push_back(slower.round_p50_us[r] / faster.round_p50_us[r]);
  return ratios;
}

std::string summaryHeader() {
  return padRight("executor", 13) + padLeft("iters", 7) + padLeft("p50_us", 12) + padLeft("p90_us", 12) +
         padLeft("p99_us", 12) + padLeft("mean_us", 12) + padLeft("min_us", 12) + padLeft("infer_per_s", 13) + "\n";
}

std::string summaryRow(const std::string& name, const LatencySummary& s) {
  return padRight(name, 13) + padLeft(std::to_string(s.count), 7) + padLeft(fixed(s.p50_us, 1), 12) +
         padLeft(fixed(s.p90_us, 1), 12) + padLeft(fixed(s.p99_us, 1), 12) + padLeft(fixed(s.mean_us, 1), 12) +
         padLeft(fixed(s.min_us, 1), 12) + padLeft(fixed(s.throughput, 1), 13) + "\n";
}

std::string summaryJson(const LatencySummary& s) {
  return json::Object()
      .add("iters", json::num(static_cast<long long>(s.count)))
      .add("p50_us", json::num(s.p50_us))
      .add("p90_us", json::num(s.p90_us))
      .add("p99_us", json::num(s.p99_us))
      .add("mean_us", json::num(s.mean_us))
      .add("min_us", json::num(s.min_us))
      .add("max_us", json::num(s.max_us))
      .add("throughput_per_s", json::num(s.throughput))
      .done();
}

}  // namespace brisk::cli
