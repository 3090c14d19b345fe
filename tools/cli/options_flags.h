#pragma once
// Command-line flags for every brisk::Options field (and the CLI-wide --threads and
// --verbose), shared by all subcommands.
#include <cstdint>
#include <string>
#include <vector>

#include "core/common/options.h"
#include "tools/cli/flags.h"

namespace brisk::cli {

struct CommonFlags {
  // brisk::Options
  std::vector<std::string> plugins;  // --plugin (added to the defaults)
  bool no_default_plugins = false;
  std::vector<std::string> plugin_path;
  bool optimize_numerics = true;
  bool use_out_variants = true;
  bool use_native = true;
  bool fallback_only = false;
  bool strict_inputs = true;
  bool memory_planning = true;
  std::string planner = "best_of_orders";
  bool manage_output_tensors = false;
  bool inplace_reuse = true;
  bool small_gemm = true;
  bool plan_kernel_scratch = true;
  int64_t max_runtimes = -1;     // -1 = keep the default
  int64_t runtime_idle_ms = -1;  // -1 = keep the default
  // CLI-wide
  int64_t threads = 0;  // 0 = the command's default (bench: 1; others: libtorch's)
  int64_t inter_op_threads = 0;
  int64_t max_parallel_ops = 1;
  bool verbose = false;

  // Registers the flags above on `parser`.
  void addTo(FlagParser& parser);
  // The Options the flags describe (defaults for anything not given).
  Options options() const;
};

// One line: "plugins=[ops_cpu] optimize_numerics=1 ..." (every field).
std::string describeOptions(const Options& o);
// Same fields as a JSON object.
std::string optionsJson(const Options& o);

}  // namespace brisk::cli
