#include "tools/cli/threading_bench.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <ostream>
#include <thread>
#include <vector>

#include "core/frontend/model_inputs.h"
#include "core/executor/module.h"
#include "core/common/option_ranges.h"
#include "core/report/format.h"
#include "core/report/json.h"
#include "core/report/module_stats.h"
#include "core/report/stats.h"
#include "core/report/timing.h"
#include "threading/inter_op_arena.h"
#include "threading/thread_settings.h"
#include "tools/cli/flags.h"

namespace brisk::cli {

using report::fixed;
using report::median;
using report::moduleStatsJson;
using report::moduleStatsText;
using report::timeCalls;
namespace json = report::json;

void ThreadingBenchFlags::addTo(FlagParser& p) {
  p.addBool("serial-baseline", &serial_baseline,
            "also time brisk's serial executor (forks inline, max_parallel_ops 1) against brisk as configured");
  p.addInt("callers", &callers, "N", "also measure the throughput of N threads calling one Module vs one thread", 1,
           kMaxThreads);
}

namespace {

using Clock = std::chrono::steady_clock;

// Inferences per second of `threads` threads each calling run(thread index) for
// `seconds`.
double throughput(const std::function<void(int)>& run, int threads, double seconds) {
  std::atomic<bool> go{false};
  std::atomic<int64_t> done{0};
  std::vector<std::thread> pool;
  std::atomic<int> ready{0};
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (!go.load()) std::this_thread::yield();
      const auto start = Clock::now();
      int64_t n = 0;
      while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
        run(t);
        ++n;
      }
      done += n;
    });
  while (ready.load() < threads) std::this_thread::yield();
  const auto start = Clock::now();
  go = true;
  for (auto& th : pool) th.join();
  return static_cast<double>(done.load()) / std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

std::string runSerialBaseline(const Module& module, const std::string& model_path, const Options& options,
                              const ModelInputs& inputs, int64_t rounds, double seconds, std::ostream& os) {
  Options serial_options = options;
  serial_options.max_parallel_ops = 1;
  auto serial = Module::load(model_path, serial_options);
  RunOptions inline_forks;
  inline_forks.launcher = [](Task t) { t(); };
  auto run_configured = [&] { (void)module.run(inputs.args, inputs.kwargs); };
  auto run_serial = [&] { (void)serial->run(inputs.args, inputs.kwargs, inline_forks); };
  for (int i = 0; i < 5; ++i) {
    run_configured();
    run_serial();
  }
  std::vector<double> all_c, all_s, ratios;
  std::vector<std::string> rounds_json;
  os << "\nserial baseline (forks inline, max_parallel_ops 1) vs brisk as configured (max_parallel_ops "
     << options.max_parallel_ops << ", inter-op arena " << threading::InterOpArena::get().size() << "):\n";
  for (int64_t r = 0; r < rounds; ++r) {
    std::vector<double> c, s;
    if (r % 2 == 0) {
      c = timeCalls(run_configured, 0, seconds);
      s = timeCalls(run_serial, 0, seconds);
    } else {
      s = timeCalls(run_serial, 0, seconds);
      c = timeCalls(run_configured, 0, seconds);
    }
    const double pc = median(c), ps = median(s);
    ratios.push_back(ps / pc);
    all_c.insert(all_c.end(), c.begin(), c.end());
    all_s.insert(all_s.end(), s.begin(), s.end());
    os << "  round " << r + 1 << ": brisk p50 " << fixed(pc, 1) << " us, serial p50 " << fixed(ps, 1)
       << " us, speed-up " << fixed(ps / pc, 3) << "\n";
    rounds_json.push_back(json::Object()
                              .add("brisk_p50_us", json::num(pc))
                              .add("serial_p50_us", json::num(ps))
                              .add("speedup", json::num(ps / pc))
                              .done());
  }
  const double pc = median(all_c), ps = median(all_s);
  os << "  brisk p50 " << fixed(pc, 1) << " us, serial executor p50 " << fixed(ps, 1) << " us: speed-up "
     << fixed(ps / pc, 3) << " (median of per-round: " << fixed(median(ratios), 3) << ")\n";
  return json::Object()
      .add("brisk_p50_us", json::num(pc))
      .add("serial_p50_us", json::num(ps))
      .add("speedup", json::num(ps / pc))
      .add("speedup_round_median", json::num(median(ratios)))
      .add("rounds", json::array(rounds_json))
      .done();
}

std::string runCallersThroughput(const Module& module, const ModelInputs& inputs, int64_t callers, int64_t rounds,
                                 double seconds, std::ostream& os) {
  // Each caller thread runs on its own copy of the inputs, as separate requests would:
  // threads sharing one set of input tensors would contend on their reference counts
  // (every run's argument list and every view of an input take a reference), which a
  // service never does and which costs this measurement several percent.
  std::vector<ModelInputs> own(static_cast<size_t>(callers));
  for (ModelInputs& in : own) in = cloneInputs(inputs);
  auto run = [&](int t) { (void)module.run(own[t].args, own[t].kwargs); };
  throughput(run, static_cast<int>(callers), 0.05);  // creates the pooled runtimes, warms them
  std::vector<double> one, many, ratios;
  std::vector<std::string> rounds_json;
  os << "\nthroughput: " << callers
     << " caller threads on one Module vs 1 (inferences/s; each thread its own inputs):\n";
  for (int64_t r = 0; r < rounds; ++r) {
    double a, b;
    if (r % 2 == 0) {
      a = throughput(run, 1, seconds);
      b = throughput(run, static_cast<int>(callers), seconds);
    } else {
      b = throughput(run, static_cast<int>(callers), seconds);
      a = throughput(run, 1, seconds);
    }
    one.push_back(a);
    many.push_back(b);
    ratios.push_back(b / a);
    os << "  round " << r + 1 << ": 1 caller " << fixed(a, 1) << "/s, " << callers << " callers " << fixed(b, 1)
       << "/s, scaling " << fixed(b / a, 3) << "\n";
    rounds_json.push_back(json::Object()
                              .add("one_caller_per_s", json::num(a))
                              .add("callers_per_s", json::num(b))
                              .add("scaling", json::num(b / a))
                              .done());
  }
  // The module's stats after the concurrent runs: the pool counters show how many
  // Runtimes the callers needed.
  const ModuleStats stats = module.stats();
  os << "  median: 1 caller " << fixed(median(one), 1) << "/s, " << callers << " callers " << fixed(median(many), 1)
     << "/s, scaling " << fixed(median(ratios), 3) << "\n"
     << "  module stats: " << moduleStatsText(stats) << "\n";
  return json::Object()
      .add("callers", json::num(static_cast<long long>(callers)))
      .add("one_caller_per_s", json::num(median(one)))
      .add("callers_per_s", json::num(median(many)))
      .add("scaling", json::num(median(ratios)))
      .add("model_stats", moduleStatsJson(stats))
      .add("rounds", json::array(rounds_json))
      .done();
}

}  // namespace brisk::cli
