// brisk bench [MODEL] [--inputs FILE] [--warmup N] [--iters N] [--rounds N]
//             [--seconds S] [--json FILE] [flags]
//
// Times brisk and the TorchScript interpreter (JitReference: the same frozen model) in
// one process, on the same inputs: warm-up, then rounds in rotating order (brisk first
// in odd rounds, the interpreter first in even ones), each round timing a block of
// iterations per executor. Every iteration is timed on its own; percentiles are over
// all rounds' iterations; the ratio is interpreter p50 / brisk p50 (>1: brisk faster),
// also as the median of per-round ratios.
//
// A PT2 archive is compared with the interpreter on its TorchScript twin; without one
// (reference.h) brisk is timed alone, checked against ep.module()'s saved outputs when
// there are some, and the interpreter's row says why it is missing. PT2 archives also get
// a NativeRT row saying whether this build and libtorch have NativeRT (nativert_probe.h).
#include <fstream>
#include <iostream>
#include <memory>

#include "core/common/error.h"
#include "core/frontend/pt2/pt2.h"
#include "core/frontend/model_inputs.h"
#include "core/report/format.h"
#include "core/report/json.h"
#include "core/report/module_stats.h"
#include "core/report/stats.h"
#include "tools/cli/command_preamble.h"
#include "tools/cli/bench_rounds.h"
#include "tools/cli/commands.h"
#include "tools/cli/common.h"
#include "tools/cli/memory_comparison.h"
#include "tools/cli/memory_probe.h"
#include "tools/cli/nativert_probe.h"
#include "tools/cli/options_flags.h"
#include "tools/cli/profile_flags.h"
#include "tools/cli/reference.h"
#include "tools/cli/settings.h"
#include "tools/cli/threading_bench.h"
#include "tools/cli/timing.h"
#include "tools/ivalue_compare.h"
#include "tools/jit_reference.h"

namespace brisk::cli {

using report::LatencySummary;
using report::fixed;
using report::median;
using report::moduleStatsJson;
using report::moduleStatsText;
using report::padRight;
using report::summarize;
namespace json = report::json;

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

// The model under test, loaded both ways, and what the report's header shows.
struct BenchSetup {
  Options options;
  std::string inputs_path;
  ModelInputs inputs;
  LoadedModel brisk;
  Reference reference;
  std::unique_ptr<JitReference> interpreter;  // null unless reference.kind is kInterpreter
  double interpreter_load_ms = 0;
  bool pt2 = false;
  std::string nativert;  // PT2 archives: why NativeRT has no row of numbers
  Settings settings;
};

// The timed executors; `unplanned` (the model without memory planning) only with
// --compare-planning.
struct BenchTiming {
  Executor brisk{"brisk", nullptr, {}, {}, 0};
  Executor interpreter{"interpreter", nullptr, {}, {}, 0};
  LoadedModel unplanned_model;
  Executor unplanned{"brisk (no planning)", nullptr, {}, {}, 0};
  std::vector<std::string> rounds_json;
};

// Everything `--json` writes besides the setup and the timing.
struct BenchOutcome {
  bool checked = false;  // false: no reference to check against
  std::string diff;      // "" when brisk's output matches the reference's
  LatencySummary brisk, interpreter;
  double ratio = 0, round_ratio = 0;
  ModuleStats after;
  std::string planning_json = "null", profile_json = "null", serial_json = "null", callers_json = "null",
              memory_json = "null";
};

void printHeader(const BenchSetup& b) {
  std::cout << "brisk bench: " << b.brisk.location.name << " (" << b.brisk.location.path << ")\n"
            << "inputs: " << b.inputs_path << "\n"
            << "settings: " << describeSettings(b.settings) << "\n"
            << "options: " << describeOptions(b.options) << "\n"
            << "plugins: " << describePlugins() << "\n"
            << "model: " << moduleStatsText(b.brisk.module->stats()) << " (brisk load " << fixed(b.brisk.load_ms, 1)
            << " ms" << (b.interpreter ? ", interpreter load " + fixed(b.interpreter_load_ms, 1) + " ms" : "")
            << ")\n";
  if (!b.interpreter) std::cout << "reference: " << b.reference.no_interpreter << "\n";
  if (b.settings.glibc_tunables == "unset")
    std::cout << "note: GLIBC_TUNABLES unset: glibc malloc may return and re-fault large blocks every run\n";
  std::cout.flush();
}

// Correctness once, before timing (on fresh copies, in case the model mutates them).
// Returns the difference ("" when none); a difference is a warning, not an error, so the
// timings are still shown, but it goes to stderr too so that it is not missed.
std::string checkOutputs(const BenchSetup& b, BenchOutcome& o) {
  const std::string name = referenceName(b.reference);
  if (b.reference.kind == Reference::Kind::kNone) {
    std::cout << "check: none: " << b.reference.why_none << "\n";
    return "";
  }
  ModelInputs a = cloneInputs(b.inputs);
  const c10::IValue got = b.brisk.module->run(std::move(a.args), a.kwargs);
  const c10::IValue expected = b.interpreter
                                   ? runInterpreter(*b.interpreter, cloneInputs(b.inputs), b.brisk.location.path)
                                   : loadSavedOutputs(b.reference.path);
  o.checked = true;
  const std::string diff = compareIValues(got, expected, checkTolerance(b.options.precision));
  const std::string source = b.interpreter ? "" : " (" + b.reference.path + ")";
  if (diff.empty()) {
    std::cout << "check: brisk's output matches " << name << source << toleranceNote(b.options.precision) << "\n";
  } else {
    std::cout << "check: WARNING: brisk's output DIFFERS from " << name << source << ": " << diff
              << toleranceNote(b.options.precision) << "\n";
    std::cerr << "brisk: WARNING: brisk's output DIFFERS from " << name << ": " << diff
              << " (timings below are of a wrong result)" << std::endl;
  }
  return diff;
}

// Warm-up and the rotating rounds, printing the plan and the per-round table.
void timeExecutors(const BenchFlags& f, const BenchSetup& b, BenchTiming& t) {
  t.brisk.run = [&] { (void)b.brisk.module->run(b.inputs.args, b.inputs.kwargs); };
  std::vector<Executor*> execs{&t.brisk};
  if (b.interpreter) {
    t.interpreter.run = [&] { (void)b.interpreter->run(b.inputs); };
    execs.push_back(&t.interpreter);
  }
  // --compare-planning: the same model without memory planning, third in the rotation.
  if (f.mem.compare_planning) {
    Options o = b.options;
    o.memory_planning = false;
    t.unplanned_model = loadModel(b.brisk.location, o);
    t.unplanned.run = [&] { (void)t.unplanned_model.module->run(b.inputs.args, b.inputs.kwargs); };
    execs.push_back(&t.unplanned);
  }
  for (Executor* e : execs) warmUp(*e, f.warmup);
  std::cout << "warmup: " << t.brisk.warmup_iters << " brisk"
            << (b.interpreter ? ", " + std::to_string(t.interpreter.warmup_iters) + " interpreter" : "")
            << " iterations" << (f.warmup < 0 ? " (auto)" : "") << "\n"
            << "plan: " << f.rounds << " rounds x "
            << (f.iters > 0 ? std::to_string(f.iters) + " iterations" : "~" + fixed(f.seconds * 1e3, 0) + " ms")
            << " per executor, rotating order\n\n";
  t.rounds_json = runRounds(execs, b.interpreter ? &t.interpreter : nullptr, f.rounds, f.iters, f.seconds, std::cout);
}

// The latency table and the interpreter/brisk ratio; without an interpreter, its row
// says why, and PT2 archives get NativeRT's row.
void printSummary(const BenchSetup& b, const BenchTiming& t, BenchOutcome& o) {
  o.brisk = summarize(t.brisk.latencies_us);
  std::cout << "\n" << summaryHeader() << summaryRow("brisk", o.brisk);
  if (b.interpreter) {
    o.interpreter = summarize(t.interpreter.latencies_us);
    std::cout << summaryRow("interpreter", o.interpreter);
  } else {
    std::cout << padRight("interpreter", 13) << "not run: " << b.reference.no_interpreter << "\n";
  }
  if (b.pt2) std::cout << padRight("nativert", 13) << "not run: " << b.nativert << "\n";
  if (!b.interpreter) return;
  o.ratio = o.interpreter.p50_us / o.brisk.p50_us;
  o.round_ratio = median(roundRatios(t.interpreter, t.brisk));
  std::cout << "\nratio interpreter_p50/brisk_p50: " << fixed(o.ratio, 3)
            << " (median of per-round ratios: " << fixed(o.round_ratio, 3) << "; >1 means brisk is faster)\n";
}

// --compare-planning: the row of brisk without memory planning and its ratio to brisk.
std::string printPlanningComparison(const BenchTiming& t, const LatencySummary& brisk) {
  const LatencySummary su = summarize(t.unplanned.latencies_us);
  const double round_median = median(roundRatios(t.unplanned, t.brisk));
  std::cout << summaryRow("no planning", su)
            << "planning ratio no_planning_p50/brisk_p50: " << fixed(su.p50_us / brisk.p50_us, 3)
            << " (median of per-round ratios: " << fixed(round_median, 3) << "; >=1 means planning is not slower)\n";
  return json::Object()
      .add("brisk_no_planning", summaryJson(su))
      .add("ratio_p50", json::num(su.p50_us / brisk.p50_us))
      .add("ratio_round_median", json::num(round_median))
      .done();
}

// The optional sections after the timed rounds (--profile, --serial-baseline,
// --callers, --memory), each printing its own table.
void runExtras(const BenchFlags& f, const BenchSetup& b, const std::vector<std::string>& args, BenchOutcome& o) {
  const Module& module = *b.brisk.module;
  if (f.prof.enabled()) o.profile_json = runProfile(f.prof, module, b.inputs, o.brisk.p50_us, std::cout);
  if (f.thr.serial_baseline)
    o.serial_json =
        runSerialBaseline(module, b.brisk.location.path, b.options, b.inputs, f.rounds, f.seconds, std::cout);
  if (f.thr.callers > 0)
    o.callers_json = runCallersThroughput(module, b.inputs, f.thr.callers, f.rounds, f.seconds, std::cout);
  if (f.mem.memory) o.memory_json = runMemoryComparison(f.mem, args, b.interpreter != nullptr, std::cout);
}

const char* kindName(Reference::Kind k) {
  switch (k) {
    case Reference::Kind::kInterpreter: return "interpreter";
    case Reference::Kind::kSavedOutputs: return "saved_outputs";
    case Reference::Kind::kNone: break;
  }
  return "none";
}

std::string referenceJson(const Reference& r) {
  return json::Object()
      .add("kind", json::str(kindName(r.kind)))
      .add("path", r.path.empty() ? "null" : json::str(r.path))
      .add("no_interpreter", r.no_interpreter.empty() ? "null" : json::str(r.no_interpreter))
      .add("why_none", r.why_none.empty() ? "null" : json::str(r.why_none))
      .done();
}

void writeJson(const std::string& path, const BenchFlags& f, const BenchSetup& b, const BenchTiming& t,
               const BenchOutcome& o) {
  std::ofstream out(path);
  if (!out) throw Error("cannot write JSON file: " + path);
  const bool interp = b.interpreter != nullptr;
  out << json::Object()
             .add("model", json::str(b.brisk.location.name))
             .add("model_path", json::str(b.brisk.location.path))
             .add("inputs", json::str(b.inputs_path))
             .add("settings", settingsJson(b.settings))
             .add("options", optionsJson(b.options))
             .add("plugins", json::str(describePlugins()))
             .add("model_stats", moduleStatsJson(o.after))
             .add("brisk_load_ms", json::num(b.brisk.load_ms))
             .add("interpreter_load_ms", interp ? json::num(b.interpreter_load_ms) : "null")
             .add("reference", referenceJson(b.reference))
             .add("check_match", o.checked ? json::boolean(o.diff.empty()) : "null")
             .add("check_difference", json::str(o.diff))
             .add("warmup", json::Object()
                                .add("brisk", json::num(static_cast<long long>(t.brisk.warmup_iters)))
                                .add("interpreter", interp ? json::num(static_cast<long long>(t.interpreter.warmup_iters))
                                                           : "null")
                                .done())
             .add("iters_per_round", f.iters > 0 ? json::num(static_cast<long long>(f.iters)) : "null")
             .add("seconds_per_round", f.iters > 0 ? "null" : json::num(f.seconds))
             .add("rounds", json::array(t.rounds_json))
             .add("brisk", summaryJson(o.brisk))
             .add("interpreter", interp ? summaryJson(o.interpreter) : "null")
             .add("ratio_p50", interp ? json::num(o.ratio) : "null")
             .add("ratio_round_median", interp ? json::num(o.round_ratio) : "null")
             .add("nativert", b.pt2 ? json::Object().add("ran", "false").add("reason", json::str(b.nativert)).done()
                                    : "null")
             .add("profile", o.profile_json)
             .add("serial_baseline", o.serial_json)
             .add("callers", o.callers_json)
             .add("memory", o.memory_json)
             .add("compare_planning", o.planning_json)
             .done()
      << "\n";
  if (!out.flush()) throw Error("cannot write JSON file: " + path);
  std::cout << "json: " << path << "\n";
}

}  // namespace

std::string benchUsage(bool common) {
  return "brisk bench [MODEL] [--inputs FILE] [--warmup N] [--iters N] [--rounds N] [--seconds S] [--json FILE] [flags]\n"
         "  Times brisk and the TorchScript interpreter (same frozen model, same inputs) in one\n"
         "  process: warm-up, then rounds in rotating order; prints p50/p90/p99 latency (us),\n"
         "  throughput and the interpreter/brisk p50 ratio (>1: brisk faster). A PT2 archive is\n"
         "  compared with the interpreter on its TorchScript twin <stem>.pt; without one brisk is\n"
         "  timed alone (checked against ep.module()'s saved <stem>.pt2.expected.pt if present),\n"
         "  and a NativeRT row says whether this build and libtorch have NativeRT. Runs with ONE\n"
         "  intra-op thread unless --threads N is given (MKL's GEMMs follow it); for comparable\n"
         "  numbers also export\n"
         "  GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736\n"
         "  (otherwise glibc malloc re-faults large blocks every run).\n" +
         flagsUsage<BenchFlags>(common);
}

int benchCommand(const std::vector<std::string>& args) {
  BenchFlags f;
  FlagParser parser;
  f.addAll(parser);
  f.mem.addHidden(parser);
  const std::optional<std::vector<std::string>> positional = parseOrHelp(parser, args, f.help, benchUsage);
  if (!positional) return kExitOk;
  if (parser.given("iters") && parser.given("seconds")) throw UsageError("--iters and --seconds are exclusive");
  applyCommonFlags(f.common, 1);  // --threads 0: libtorch's

  BenchSetup b;
  b.options = f.common.options();
  const ModelLocation location = locateModel(modelArg(*positional, "bench"));
  b.inputs_path = locateInputs(location, f.mem.inputsFlag(location, f.inputs));
  b.inputs = loadInputs(b.inputs_path);
  // A `--memory` measurement process: loads only the executor it measures.
  if (!f.mem.child.empty())
    return memoryProbeChild(f.mem.child, location.path, b.inputs, b.options, f.mem.memory_iters);
  b.brisk = loadModel(location, b.options);
  const std::shared_ptr<const CompiledModule> compiled = b.brisk.module->compiled();
  coerceToSignature(b.inputs, compiled->signature());
  b.reference = findReference(location, b.inputs_path);
  if (b.reference.kind == Reference::Kind::kInterpreter) {
    const double t0 = nowSeconds();
    b.interpreter = std::make_unique<JitReference>(b.reference.path, b.options.optimize_numerics);
    b.interpreter_load_ms = (nowSeconds() - t0) * 1e3;
  }
  b.pt2 = isPt2Archive(location.path);
  if (b.pt2) b.nativert = describeNativeRt(probeNativeRt());
  b.settings = currentSettings();
  printHeader(b);

  BenchOutcome o;
  o.diff = checkOutputs(b, o);
  BenchTiming t;
  timeExecutors(f, b, t);
  printSummary(b, t, o);
  if (f.mem.compare_planning) o.planning_json = printPlanningComparison(t, o.brisk);
  // After the timed runs the memory plan exists: report it too.
  o.after = b.brisk.module->stats();
  std::cout << "after runs: " << moduleStatsText(o.after) << "\n";
  runExtras(f, b, args, o);
  if (!f.json.empty()) writeJson(userPath(f.json), f, b, t, o);
  return kExitOk;
}

}  // namespace brisk::cli
