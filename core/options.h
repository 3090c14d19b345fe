#pragma once
// Load-time options of a Module. Every field has a default that suits most users, a
// CLI flag (tools/cli/options_flags.cc) and a line in the README.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace brisk {

struct Options {
  // --- Loading -------------------------------------------------------------------
  // Plugins loaded before kernels are chosen, by name ("ops_cpu" finds
  // libbrisk_ops_cpu.so on the plugin path) or by path. A default plugin that cannot be
  // found is skipped with a warning; one named explicitly is an error.
  std::vector<std::string> plugins = {"ops_cpu"};
  bool default_plugins_optional = true;
  // Extra directories searched before $BRISK_PLUGIN_PATH, the binary's directory and
  // its Bazel runfiles.
  std::vector<std::string> plugin_path;
  // Apply torch::jit::freeze's numerics-changing folds (conv-bn, etc.).
  bool optimize_numerics = true;

  // --- Kernel choice ---------------------------------------------------------------
  bool use_out_variants = true;  // false: skip the out-variant registry
  bool use_native = true;        // false: skip native kernels (prim ops too)
  // Run every node through the TorchScript operator (debugging, A/B checks).
  bool fallback_only = false;

  // --- Inputs ----------------------------------------------------------------------
  // Fix each tensor input's dtype and rank on the first successful run (or from the
  // model's traced types) and refuse others with a clear error.
  bool strict_inputs = true;

  // --- Memory ----------------------------------------------------------------------
  // Place retained intermediate tensors in one slab per block, laid out after the first
  // run (see core/memory_plan.h). false: they keep their own allocations (reused).
  bool memory_planning = true;
  // Layout algorithm from planners::PlannerRegistry: "bump", "storage_groups",
  // "greedy_by_size", "greedy_by_breadth". Unknown names are an error at load.
  std::string planner = "greedy_by_size";

  // --- Runtimes --------------------------------------------------------------------
  // Module::run borrows a Runtime from a pool; at most this many exist at once
  // (callers beyond it wait). 0 = unbounded.
  size_t max_runtimes = 0;
  // Idle runtimes older than this are freed when a runtime is returned. 0 = never.
  int64_t runtime_idle_ms = 30000;
};

}  // namespace brisk
