#include "tools/cli/memory_comparison.h"

#include <algorithm>
#include <ostream>

#include "core/common/error.h"
#include "core/common/self_paths.h"
#include "core/report/format.h"
#include "core/report/json.h"
#include "core/report/stats.h"
#include "tools/cli/memory_probe.h"
#include "tools/cli/settings.h"

namespace brisk::cli {

using report::fixed;
using report::median;
using report::padLeft;
using report::padRight;
namespace json = report::json;

namespace {

double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }
std::string plus(double v) { return (v >= 0 ? "+" : "") + fixed(v, 1); }

const char* displayName(const std::string& executor) {
  if (executor == kProbeBriskNoPlanning) return "brisk (no planning)";
  return executor.c_str();
}

// One executor's processes, summarized: medians in MiB, and the peak of each process.
struct MemoryRow {
  std::vector<double> peaks;
  double peak = 0, first = 0, steady = 0, end = 0, baseline = 0;
};

MemoryRow summarizeSamples(const std::vector<MemorySample>& samples) {
  MemoryRow row;
  std::vector<double> first, steady, end, baseline;
  for (const MemorySample& s : samples) {
    row.peaks.push_back(mib(s.peak()));
    first.push_back(mib(s.first_peak));
    steady.push_back(mib(s.steady_peak));
    end.push_back(mib(s.end));
    baseline.push_back(mib(s.baseline));
  }
  row.peak = median(row.peaks);
  row.first = median(first);
  row.steady = median(steady);
  row.end = median(end);
  row.baseline = median(baseline);
  return row;
}

// `runs` child processes per executor, in rotating order so that no executor always
// runs first on a machine whose state drifts; samples[e] belongs to executors[e].
std::vector<std::vector<MemorySample>> probeRotating(const std::vector<std::string>& executors, int64_t runs,
                                                     const std::vector<std::string>& args) {
  // The parent re-executes this executable for each probe.
  const std::string exe = selfExe();
  if (exe.empty()) throw Error("memory probe: cannot read /proc/self/exe");
  std::vector<std::vector<MemorySample>> samples(executors.size());
  for (int64_t r = 0; r < runs; ++r)
    for (size_t k = 0; k < executors.size(); ++k) {
      const size_t e = (static_cast<size_t>(r) + k) % executors.size();
      samples[e].push_back(probeMemoryInChild(exe, args, executors[e]));
    }
  return samples;
}

void printMemoryHeader(const MemoryBenchFlags& flags, const Settings& settings, std::ostream& out) {
  out << "\nmemory: peak RSS increase over the loaded model (MiB), one process per measurement, "
      << flags.memory_runs << " process(es) per executor x " << flags.memory_iters
      << " inferences, medians; baseline = RSS after load, inputs and malloc_trim\n"
      << "memory settings: OMP_NUM_THREADS=" << settings.omp_num_threads
      << " MKL_NUM_THREADS=" << settings.mkl_num_threads << " GLIBC_TUNABLES=" << settings.glibc_tunables
      << " at::get_num_threads=" << settings.at_threads << "\n";
  out.flush();
}

void printMemoryRow(const std::string& executor, const MemoryRow& row, std::ostream& out) {
  const auto [lo, hi] = std::minmax_element(row.peaks.begin(), row.peaks.end());
  out << padRight(displayName(executor), 21) << padLeft(plus(row.peak), 10) << padLeft(plus(row.first), 15)
      << padLeft(plus(row.steady), 12) << padLeft(plus(row.end), 10) << padLeft(fixed(row.baseline, 1), 14)
      << padLeft(fixed(*lo, 1) + ".." + fixed(*hi, 1), 16) << "\n";
}

std::string memoryRowJson(const std::string& executor, const MemoryRow& row) {
  std::vector<std::string> peaks;
  for (double p : row.peaks) peaks.push_back(json::num(p));
  return json::Object()
      .add("executor", json::str(executor))
      .add("peak_mib", json::num(row.peak))
      .add("first_run_mib", json::num(row.first))
      .add("steady_mib", json::num(row.steady))
      .add("end_mib", json::num(row.end))
      .add("baseline_mib", json::num(row.baseline))
      .add("peak_mib_per_process", json::array(peaks))
      .done();
}

}  // namespace

std::string runMemoryComparison(const MemoryBenchFlags& flags, const std::vector<std::string>& bench_args,
                                bool with_interpreter, std::ostream& out) {
  std::vector<std::string> executors{kProbeBrisk};
  if (with_interpreter) executors.push_back(kProbeInterpreter);
  if (flags.compare_planning) executors.push_back(kProbeBriskNoPlanning);
  // The child must measure the same inputs and iteration count as asked here.
  std::vector<std::string> args = bench_args;
  args.push_back("--memory-iters");
  args.push_back(std::to_string(flags.memory_iters));

  const Settings settings = currentSettings();
  printMemoryHeader(flags, settings, out);
  const std::vector<std::vector<MemorySample>> samples = probeRotating(executors, flags.memory_runs, args);

  out << padRight("executor", 21) << padLeft("peak_mib", 10) << padLeft("first_run_mib", 15)
      << padLeft("steady_mib", 12) << padLeft("end_mib", 10) << padLeft("baseline_mib", 14)
      << padLeft("peak_min..max", 16) << "\n";
  std::vector<MemoryRow> rows;
  std::vector<std::string> rows_json;
  for (size_t e = 0; e < executors.size(); ++e) {
    rows.push_back(summarizeSamples(samples[e]));
    printMemoryRow(executors[e], rows.back(), out);
    rows_json.push_back(memoryRowJson(executors[e], rows.back()));
  }
  const double ratio = with_interpreter && rows[1].peak != 0 ? rows[0].peak / rows[1].peak : 0.0;
  if (with_interpreter)
    out << "memory ratio brisk/interpreter (peak increase): " << fixed(ratio, 3) << " (<1 means brisk uses less)\n";
  out.flush();
  return json::Object()
      .add("processes_per_executor", json::num(static_cast<long long>(flags.memory_runs)))
      .add("inferences_per_process", json::num(static_cast<long long>(flags.memory_iters)))
      .add("settings", settingsJson(settings))
      .add("executors", json::array(rows_json))
      .add("ratio_brisk_interpreter", with_interpreter ? json::num(ratio) : "null")
      .done();
}

}  // namespace brisk::cli
