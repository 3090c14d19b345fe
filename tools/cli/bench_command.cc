// brisk bench [MODEL] [--inputs FILE] [--warmup N] [--iters N] [--rounds N]
//             [--seconds S] [--json FILE] [flags]
//
// Times brisk and the TorchScript interpreter (JitReference: the same frozen model) in
// one process, on the same inputs: warm-up, then rounds in rotating order (brisk first
// in odd rounds, the interpreter first in even ones), each round timing a block of
// iterations per executor. Every iteration is timed on its own; percentiles are over
// all rounds' iterations; the ratio is interpreter p50 / brisk p50 (>1: brisk faster),
// also as the median of per-round ratios.
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "core/common/error.h"
#include "core/frontend/model_inputs.h"
#include "tools/cli/commands.h"
#include "tools/cli/common.h"
#include "tools/cli/json.h"
#include "tools/cli/memory_probe.h"
#include "tools/cli/options_flags.h"
#include "tools/cli/profile_flags.h"
#include "tools/cli/settings.h"
#include "tools/cli/stats.h"
#include "tools/cli/threading_bench.h"
#include "tools/ivalue_compare.h"
#include "tools/jit_reference.h"

namespace brisk::cli {
namespace {

struct BenchFlags {
  CommonFlags common;
  std::string inputs;
  int64_t warmup = -1;  // -1 = auto
  int64_t iters = 0;    // 0 = time-based blocks (--seconds)
  int64_t rounds = 5;
  double seconds = 0.2;
  std::string json;
  MemoryBenchFlags mem;  // --memory, --batch, --compare-planning (tools/cli/memory_probe.h)
  ProfileFlags prof;     // --profile, --trace, --top (tools/cli/profile_flags.h)
  ThreadingBenchFlags thr;  // --serial-baseline, --callers (tools/cli/threading_bench.h)
  bool help = false;

  void addOwn(FlagParser& p) {
    p.addString("inputs", &inputs, "FILE", "inputs file (default: the model's <model>.inputs.pt)");
    p.addInt("warmup", &warmup, "N",
             "warm-up iterations per executor (default: auto, >= 3 iterations and >= 100 ms)", 0, 100000000);
    p.addInt("iters", &iters, "N", "iterations per executor per round (default: time-based, see --seconds)", 1,
             100000000);
    p.addInt("rounds", &rounds, "N", "rounds, in rotating executor order (default 5)", 1, 10000);
    p.addDouble("seconds", &seconds, "S", "time per executor per round when --iters is not given (default 0.2)",
                0.0, 3600.0);
    p.addString("json", &json, "FILE", "also write the results as JSON to FILE");
    prof.addTo(p);
    thr.addTo(p);
    mem.addTo(p);
  }
  void addAll(FlagParser& p) {
    addOwn(p);
    common.addTo(p);
    p.addBool("help", &help, "show this help");
  }
};

struct Executor {
  std::string name;
  std::function<void()> run;  // one inference; the output is dropped inside the timing
  std::vector<double> latencies_us;
  std::vector<double> round_p50_us;
  int64_t warmup_iters = 0;
};

void timeBlock(Executor& e, int64_t iters, double seconds, std::vector<double>& block) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto last = start;
  for (int64_t i = 0;; ++i) {
    if (iters > 0) {
      if (i >= iters) break;
    } else if (i > 0 && std::chrono::duration<double>(last - start).count() >= seconds) {
      break;
    }
    const auto t0 = Clock::now();
    e.run();
    last = Clock::now();
    block.push_back(std::chrono::duration<double, std::micro>(last - t0).count());
  }
}

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

std::string pad(const std::string& s, size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }
std::string lpad(const std::string& s, size_t w) { return s.size() >= w ? " " + s : std::string(w - s.size(), ' ') + s; }

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

}  // namespace

std::string benchUsage(bool common) {
  BenchFlags f;
  FlagParser p;
  if (common) f.addAll(p);
  else f.addOwn(p);
  return "brisk bench [MODEL] [--inputs FILE] [--warmup N] [--iters N] [--rounds N] [--seconds S] [--json FILE] [flags]\n"
         "  Times brisk and the TorchScript interpreter (same frozen model, same inputs) in one\n"
         "  process: warm-up, then rounds in rotating order; prints p50/p90/p99 latency (us),\n"
         "  throughput and the interpreter/brisk p50 ratio (>1: brisk faster). Runs with ONE\n"
         "  intra-op thread unless --threads N is given (MKL's GEMMs follow it); for comparable\n"
         "  numbers also export\n"
         "  GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736\n"
         "  (otherwise glibc malloc re-faults large blocks every run).\n" +
         p.usage();
}

int benchCommand(const std::vector<std::string>& args) {
  BenchFlags f;
  FlagParser parser;
  f.addAll(parser);
  f.mem.addHidden(parser);
  std::vector<std::string> positional = parser.parse(args);
  if (f.help) {
    std::cout << benchUsage(true);
    return kExitOk;
  }
  if (parser.given("iters") && parser.given("seconds"))
    throw UsageError("--iters and --seconds are exclusive");
  setupLogging(f.common.verbose);
  setThreads(f.common.threads > 0 ? static_cast<int>(f.common.threads) : 1);
  const Options options = f.common.options();

  const ModelLocation location = locateModel(modelArg(positional, "bench"));
  const std::string inputs_path = locateInputs(location, f.mem.inputsFlag(location, f.inputs));
  const ModelInputs inputs = loadInputs(inputs_path);
  // A `--memory` measurement process: loads only the executor it measures.
  if (!f.mem.child.empty()) return memoryProbeChild(f.mem.child, location.path, inputs, options, f.mem.memory_iters);
  LoadedModel m = loadModel(location, options);
  double t0 = nowSeconds();
  JitReference ref(m.location.path, options.optimize_numerics);
  const double ref_load_ms = (nowSeconds() - t0) * 1e3;
  const Settings settings = currentSettings();
  const ModuleStats stats = m.module->stats();

  std::cout << "brisk bench: " << m.location.name << " (" << m.location.path << ")\n"
            << "inputs: " << inputs_path << "\n"
            << "settings: " << describeSettings(settings) << "\n"
            << "options: " << describeOptions(options) << "\n"
            << "plugins: " << describePlugins() << "\n"
            << "model: " << describeStats(stats) << " (brisk load " << fixed(m.load_ms, 1)
            << " ms, interpreter load " << fixed(ref_load_ms, 1) << " ms)\n";
  if (settings.glibc_tunables == "unset")
    std::cout << "note: GLIBC_TUNABLES unset: glibc malloc may return and re-fault large blocks every run\n";
  std::cout.flush();

  // Correctness once, before timing (on fresh copies, in case the model mutates them).
  std::string diff;
  {
    ModelInputs a = cloneInputs(inputs);
    c10::IValue got = m.module->run(std::move(a.args), a.kwargs);
    c10::IValue expected;
    try {
      expected = ref.run(cloneInputs(inputs));
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(Error::Where{m.location.path, "", ""},
                  "the TorchScript interpreter failed on these inputs: " + describeException(e));
    }
    diff = compareIValues(got, expected);
  }
  if (diff.empty()) {
    std::cout << "check: brisk's output matches the TorchScript interpreter\n";
  } else {
    std::cout << "check: WARNING: brisk's output DIFFERS from the TorchScript interpreter: " << diff << "\n";
    std::cerr << "brisk: WARNING: brisk's output DIFFERS from the TorchScript interpreter: " << diff
              << " (timings below are of a wrong result)" << std::endl;
  }

  Executor brisk_exec{"brisk", [&] { (void)m.module->run(inputs.args, inputs.kwargs); }, {}, {}, 0};
  Executor interp_exec{"interpreter", [&] { (void)ref.run(inputs); }, {}, {}, 0};
  std::vector<Executor*> execs{&brisk_exec, &interp_exec};
  // --compare-planning: the same model without memory planning, third in the rotation.
  LoadedModel unplanned;
  Executor unplanned_exec{"brisk (no planning)", nullptr, {}, {}, 0};
  if (f.mem.compare_planning) {
    Options o = options;
    o.memory_planning = false;
    unplanned = loadModel(location, o);
    unplanned_exec.run = [&] { (void)unplanned.module->run(inputs.args, inputs.kwargs); };
    execs.push_back(&unplanned_exec);
  }

  for (Executor* e : execs) warmUp(*e, f.warmup);
  std::cout << "warmup: " << brisk_exec.warmup_iters << " brisk, " << interp_exec.warmup_iters
            << " interpreter iterations" << (f.warmup < 0 ? " (auto)" : "") << "\n"
            << "plan: " << f.rounds << " rounds x "
            << (f.iters > 0 ? std::to_string(f.iters) + " iterations" : "~" + fixed(f.seconds * 1e3, 0) + " ms")
            << " per executor, rotating order\n\n";

  std::vector<double> round_ratios;
  std::vector<std::string> rounds_json;
  std::cout << pad("round", 7) << pad("first", 13) << lpad("brisk_p50_us", 14) << lpad("interp_p50_us", 15)
            << lpad("ratio", 8) << "\n";
  for (int64_t r = 0; r < f.rounds; ++r) {
    for (size_t k = 0; k < execs.size(); ++k) {
      Executor& e = *execs[(static_cast<size_t>(r) + k) % execs.size()];
      std::vector<double> block;
      timeBlock(e, f.iters, f.seconds, block);
      e.round_p50_us.push_back(median(block));
      e.latencies_us.insert(e.latencies_us.end(), block.begin(), block.end());
    }
    const double b = brisk_exec.round_p50_us.back(), i = interp_exec.round_p50_us.back();
    round_ratios.push_back(i / b);
    std::cout << pad(std::to_string(r + 1), 7) << pad(execs[static_cast<size_t>(r) % execs.size()]->name, 13)
              << lpad(fixed(b, 1), 14) << lpad(fixed(i, 1), 15) << lpad(fixed(i / b, 3), 8) << "\n";
    rounds_json.push_back(json::Object()
                              .add("first", json::str(execs[static_cast<size_t>(r) % execs.size()]->name))
                              .add("brisk_p50_us", json::num(b))
                              .add("interpreter_p50_us", json::num(i))
                              .add("ratio", json::num(i / b))
                              .done());
  }

  const LatencySummary sb = summarize(brisk_exec.latencies_us);
  const LatencySummary si = summarize(interp_exec.latencies_us);
  std::cout << "\n"
            << pad("executor", 13) << lpad("iters", 7) << lpad("p50_us", 12) << lpad("p90_us", 12)
            << lpad("p99_us", 12) << lpad("mean_us", 12) << lpad("min_us", 12) << lpad("infer_per_s", 13) << "\n";
  for (const auto& [name, s] : {std::pair<std::string, LatencySummary>{"brisk", sb}, {"interpreter", si}}) {
    std::cout << pad(name, 13) << lpad(std::to_string(s.count), 7) << lpad(fixed(s.p50_us, 1), 12)
              << lpad(fixed(s.p90_us, 1), 12) << lpad(fixed(s.p99_us, 1), 12) << lpad(fixed(s.mean_us, 1), 12)
              << lpad(fixed(s.min_us, 1), 12) << lpad(fixed(s.throughput, 1), 13) << "\n";
  }
  const double ratio = si.p50_us / sb.p50_us;
  const double round_ratio = median(round_ratios);
  std::cout << "\nratio interpreter_p50/brisk_p50: " << fixed(ratio, 3)
            << " (median of per-round ratios: " << fixed(round_ratio, 3) << "; >1 means brisk is faster)\n";
  // After the timed runs the memory plan exists: report it too.
  std::string planning_json = "null";
  if (f.mem.compare_planning) {
    const LatencySummary su = summarize(unplanned_exec.latencies_us);
    std::vector<double> per_round;
    for (size_t r = 0; r < unplanned_exec.round_p50_us.size(); ++r)
      per_round.push_back(unplanned_exec.round_p50_us[r] / brisk_exec.round_p50_us[r]);
    std::cout << pad("no planning", 13) << lpad(std::to_string(su.count), 7) << lpad(fixed(su.p50_us, 1), 12)
              << lpad(fixed(su.p90_us, 1), 12) << lpad(fixed(su.p99_us, 1), 12) << lpad(fixed(su.mean_us, 1), 12)
              << lpad(fixed(su.min_us, 1), 12) << lpad(fixed(su.throughput, 1), 13) << "\n"
              << "planning ratio no_planning_p50/brisk_p50: " << fixed(su.p50_us / sb.p50_us, 3)
              << " (median of per-round ratios: " << fixed(median(per_round), 3)
              << "; >=1 means planning is not slower)\n";
    planning_json = json::Object()
                        .add("brisk_no_planning", summaryJson(su))
                        .add("ratio_p50", json::num(su.p50_us / sb.p50_us))
                        .add("ratio_round_median", json::num(median(per_round)))
                        .done();
  }
  const ModuleStats after = m.module->stats();
  std::cout << "after runs: " << describeStats(after) << "\n";
  const std::string profile_json =
      f.prof.enabled() ? runProfile(f.prof, *m.module, inputs, sb.p50_us, std::cout) : "null";
  const std::string serial_json =
      f.thr.serial_baseline
          ? runSerialBaseline(*m.module, m.location.path, options, inputs, f.rounds, f.seconds, std::cout)
          : "null";
  const std::string callers_json =
      f.thr.callers > 0 ? runCallersThroughput(*m.module, inputs, f.thr.callers, f.rounds, f.seconds, std::cout)
                        : "null";
  const std::string memory_json = f.mem.memory ? runMemoryComparison(f.mem, args, std::cout) : "null";

  if (!f.json.empty()) {
    const std::string path = userPath(f.json);
    std::ofstream out(path);
    if (!out) throw Error("cannot write JSON file: " + path);
    out << json::Object()
               .add("model", json::str(m.location.name))
               .add("model_path", json::str(m.location.path))
               .add("inputs", json::str(inputs_path))
               .add("settings", settingsJson(settings))
               .add("options", optionsJson(options))
               .add("plugins", json::str(describePlugins()))
               .add("model_stats", statsJson(after))
               .add("brisk_load_ms", json::num(m.load_ms))
               .add("interpreter_load_ms", json::num(ref_load_ms))
               .add("check_match", json::boolean(diff.empty()))
               .add("check_difference", json::str(diff))
               .add("warmup", json::Object()
                                  .add("brisk", json::num(static_cast<long long>(brisk_exec.warmup_iters)))
                                  .add("interpreter", json::num(static_cast<long long>(interp_exec.warmup_iters)))
                                  .done())
               .add("iters_per_round", f.iters > 0 ? json::num(static_cast<long long>(f.iters)) : "null")
               .add("seconds_per_round", f.iters > 0 ? "null" : json::num(f.seconds))
               .add("rounds", json::array(rounds_json))
               .add("brisk", summaryJson(sb))
               .add("interpreter", summaryJson(si))
               .add("ratio_p50", json::num(ratio))
               .add("ratio_round_median", json::num(round_ratio))
               .add("profile", profile_json)
               .add("serial_baseline", serial_json)
               .add("callers", callers_json)
               .add("memory", memory_json)
               .add("compare_planning", planning_json)
               .done()
        << "\n";
    if (!out.flush()) throw Error("cannot write JSON file: " + path);
    std::cout << "json: " << path << "\n";
  }
  return kExitOk;
}

}  // namespace brisk::cli
