#pragma once
// Load-time options of a Module. Every field has a default that suits most users; its
// name, range, help text and CLI flag are declared once, in core/common/option_table.cc,
// which drives the CLI flags, the Python keywords and the README's table.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace brisk {

// The value of a plugin's option. Text (what the CLI passes) is parsed as the type the
// plugin declared for it; the other alternatives must match that type.
using PluginOptionValue = std::variant<bool, int64_t, std::string>;

// The plugin every Module loads unless told otherwise: brisk's own CPU kernels.
inline constexpr const char* kDefaultPlugin = "ops_cpu";

struct Options {
  // --- Loading -------------------------------------------------------------------
  // Plugins loaded before kernels are chosen, by name ("ops_cpu" finds
  // libbrisk_ops_cpu.so on the plugin path) or by path. A default plugin that cannot be
  // found is skipped with a warning; one named explicitly is an error.
  std::vector<std::string> plugins = {kDefaultPlugin};
  bool default_plugins_optional = true;
  // Extra directories searched before $BRISK_PLUGIN_PATH, the binary's directory and
  // its Bazel runfiles.
  std::vector<std::string> plugin_path;
  // Options the loaded plugins declare (core/kernels/plugin.h), by "plugin.option"
  // (e.g. "ops_cpu.small_gemm" -> false). Checked once the plugins are loaded: an
  // unknown name or a value of the wrong type is an error at load.
  std::map<std::string, PluginOptionValue> plugin_options;
  // A PT2 archive (torch.export) may hold several programs: the one to run, by name.
  // "" = the only one, or the one named "model" (torch.export.save's name).
  std::string pt2_program;
  // Apply torch::jit::freeze's numerics-changing folds (conv-bn, etc.).
  bool optimize_numerics = true;
  // Load-time graph passes not to run, by name: one of core's (core/graph/builtin_passes.cc)
  // or a plugin's "<plugin>.<name>"; `brisk inspect` lists them. Unknown names are an
  // error at load, once the plugins are loaded.
  std::vector<std::string> disabled_passes;

  // Delegate backends (core/kernels/delegate.h) tried on every block, in this order; a
  // name no loaded plugin registers loads the plugin of that name (libbrisk_<name>.so).
  // A default backend that cannot be found is skipped with a warning (as a default
  // plugin is); one named explicitly is an error.
  std::vector<std::string> delegates = {"onednn"};
  // false: no backend is tried (every node runs on brisk's own kernels).
  bool use_delegates = true;

  // --- Precision -------------------------------------------------------------------
  // Reduced-precision modes, applied by the ops_quantized plugin (loaded when this is
  // not empty): "fp16_weights", "int8_dynamic", and "bf16", which the onednn delegate
  // applies (ops_quantized/precision.h); an unknown name is an error at load. Empty:
  // fp32, the model's own numerics.
  std::vector<std::string> precision;

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
  // run (see core/memory/memory_plan.h). false: they keep their own allocations (reused).
  bool memory_planning = true;
  // Layout algorithm, by its name in planners::PlannerRegistry (planners/registry.cc).
  // Unknown names are an error at load.
  std::string planner = "best_of_orders";
  // Write the model's output tensors produced by out-variant kernels into a separate
  // output arena that the next run reuses once the caller has released every returned
  // tensor; while any is held the next run uses a second block, so results are never
  // overwritten (core/memory/output_arena.h). Saves allocating outputs each run.
  bool manage_output_tensors = false;
  // Let elementwise kernels (relu, hardtanh, add, ...) write their result into an input
  // tensor that nothing else reads (core/graph/inplace_reuse.h): what the model's relu_/add_
  // did before freezing made them functional. Less memory, warmer caches.
  bool inplace_reuse = true;
  // Serve the temporaries of kernels whose results are captured into the slab (oneDNN's
  // reorder buffers inside convolution) from the slab too, planned to live during that
  // step only, instead of from the heap (core/memory/memory_plan.h). Serial blocks.
  bool plan_kernel_scratch = true;

  // --- Runtimes --------------------------------------------------------------------
  // Module::run borrows a Runtime from a pool; at most this many exist at once
  // (callers beyond it wait). 0 = unbounded.
  size_t max_runtimes = 0;
  // Idle runtimes older than this are freed when a runtime is returned. 0 = never.
  int64_t runtime_idle_ms = 30000;

  // --- Threads ---------------------------------------------------------------------
  // Run independent nodes of the top-level graph concurrently on the inter-op arena,
  // with at most this many nodes in flight (the calling thread included). 1 = the
  // serial executor. Memory planning stays on: tensors share slab bytes only when no
  // parallel schedule can have both alive.
  int max_parallel_ops = 1;
  // Process-wide thread settings (threading/thread_settings.h), applied by the first
  // Module that sets them; a later Module asking for different values fails to load.
  // 0 = no preference. intra_op_threads: at::set_num_threads (MKL's GEMMs follow it).
  // inter_op_threads: size of the inter-op arena (default: hardware threads).
  int intra_op_threads = 0;
  int inter_op_threads = 0;
};

}  // namespace brisk
