#pragma once
// `brisk bench --memory`: peak RSS increase over the loaded model, brisk vs the
// TorchScript interpreter (and brisk without memory planning with --compare-planning).
//
// Every measurement runs in a process of its own, so one executor's heap (glibc's free
// lists, oneDNN caches, the JIT's profiling state) never hides or inflates another's:
// the CLI re-executes itself (/proc/self/exe) with the same `bench` arguments plus the
// hidden `--memory-probe-child EXECUTOR`. The child loads the model and its inputs,
// returns freed load-time heap to the OS (malloc_trim, so garbage from loading cannot
// absorb the runs' allocations), resets the kernel's peak-RSS counter
// (`echo 5 > /proc/self/clear_refs` resets VmHWM), records VmRSS as the baseline, runs
// the first inference (brisk's profile run, the JIT's profiling run), reads VmHWM,
// resets it again, runs the remaining inferences and reads VmHWM and VmRSS once more.
// It prints one `memory-probe:` line that the parent parses. The parent runs N such
// processes per executor in rotating order and reports medians.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/frontend/model_inputs.h"
#include "core/common/options.h"
#include "tools/cli/flags.h"
#include "tools/cli/model_locator.h"

namespace brisk::cli {

// Executor names understood by the child.
constexpr const char* kProbeBrisk = "brisk";
constexpr const char* kProbeBriskNoPlanning = "brisk_no_planning";  // Options::memory_planning = false
constexpr const char* kProbeInterpreter = "interpreter";            // JitReference (frozen module)

// bench's flags for memory measurement, batch-size inputs and the planning comparison.
struct MemoryBenchFlags {
  bool memory = false;            // --memory
  int64_t memory_runs = 3;        // --memory-runs N: processes per executor
  int64_t memory_iters = 5;       // --memory-iters N: inferences per process (>= 2)
  bool compare_planning = false;  // --compare-planning: adds "brisk (no planning)"
  int64_t batch = 0;              // --batch N: the bundled <model>.b<N>.inputs.pt
  std::string child;              // hidden: --memory-probe-child EXECUTOR

  // The documented flags (shown by `brisk bench --help`).
  void addTo(FlagParser& p);
  // The child's flag, registered on the parser only (never in the usage text).
  void addHidden(FlagParser& p);
  // The inputs flag bench should use: `inputs_flag`, or with --batch N the bundled
  // <model>.b<N>.inputs.pt next to the model (an error naming the batch sizes found
  // when there is none; --batch with --inputs is a usage error).
  std::string inputsFlag(const ModelLocation& model, const std::string& inputs_flag) const;
};

// One child process's result. Sizes are bytes; increases are over `baseline`.
struct MemorySample {
  size_t baseline = 0;     // VmRSS after load, inputs and malloc_trim
  size_t first_peak = 0;   // VmHWM during the first inference, minus baseline
  size_t steady_peak = 0;  // VmHWM during inferences 2..N (peak reset after the first)
  size_t end = 0;          // VmRSS after the last inference, minus baseline
  size_t peak() const { return first_peak > steady_peak ? first_peak : steady_peak; }
};

// Child side: loads `executor` for the model, measures as described above and prints
// the `memory-probe:` line on stdout. Returns the process exit code.
int memoryProbeChild(const std::string& executor, const std::string& model_path, const ModelInputs& inputs,
                     const Options& options, int64_t iters);

// Parent side: runs `exe bench <bench_args...> --memory-probe-child <executor>` and
// parses its line. Throws brisk::Error when the child fails or prints no result.
MemorySample probeMemoryInChild(const std::string& exe, const std::vector<std::string>& bench_args,
                                const std::string& executor);

// VmRSS / VmHWM of this process in bytes (0 when /proc is unavailable).
size_t currentRss();
size_t peakRss();
// Resets VmHWM to the current RSS; false when the kernel does not support it.
bool resetPeakRss();

}  // namespace brisk::cli
