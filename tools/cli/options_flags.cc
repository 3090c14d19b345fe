#include "tools/cli/options_flags.h"

#include <sstream>

#include "core/common/option_ranges.h"
#include "tools/cli/json.h"

namespace brisk::cli {

void CommonFlags::addTo(FlagParser& p) {
  p.addList("plugin", &plugins, "NAME",
            "load this plugin too (name like ops_cpu, or a path to a .so); repeatable");
  p.addBool("no-default-plugins", &no_default_plugins, "do not load the default plugins (ops_cpu)");
  p.addList("plugin-path", &plugin_path, "DIR",
            "search DIR for plugins first (before $BRISK_PLUGIN_PATH, the binary's dir, runfiles); repeatable");
  p.addSwitch("no-optimize-numerics", &optimize_numerics, false,
              "skip freeze's numerics-changing folds (conv-bn, ...)");
  p.addSwitch("no-out-variants", &use_out_variants, false, "do not use out-variant kernels");
  p.addSwitch("no-native", &use_native, false, "do not use native kernels (prim ops too)");
  p.addBool("fallback-only", &fallback_only, "run every node through the TorchScript operator");
  p.addSwitch("no-small-gemm", &small_gemm, false,
              "linear layers always call the BLAS as ATen does (default: brisk's own kernel for inputs of <= 8 rows)");
  p.addSwitch("no-strict-inputs", &strict_inputs, false,
              "do not fix input dtype/rank on the first run");
  p.addSwitch("no-memory-planning", &memory_planning, false,
              "do not place intermediate tensors in a planned slab");
  p.addString("planner", &planner, "NAME",
              "memory layout algorithm: best_of_orders (default), greedy_by_size, greedy_by_breadth, "
              "storage_groups, bump");
  p.addBool("manage-output-tensors", &manage_output_tensors,
            "write output tensors into an output arena reused once the caller released the previous outputs");
  p.addSwitch("no-inplace-reuse", &inplace_reuse, false,
              "elementwise kernels never write into an input tensor (default: they may when nothing else reads it)");
  p.addSwitch("no-plan-scratch", &plan_kernel_scratch, false,
              "kernels' temporaries (oneDNN's buffers in conv) come from the heap, not the planned slab");
  p.addInt("max-runtimes", &max_runtimes, "N", "at most N pooled runtimes (0 = unbounded)",
           kMaxRuntimesRange.min, kMaxRuntimesRange.max);
  p.addInt("runtime-idle-ms", &runtime_idle_ms, "N", "free pooled runtimes idle for N ms (0 = never)",
           kRuntimeIdleMsRange.min, kRuntimeIdleMsRange.max);
  p.addInt("threads", &threads, "N",
           "at::set_num_threads(N) (MKL's GEMMs follow it) once at start; bench default 1, others: libtorch's", 1,
           kIntraOpThreadsRange.max);
  p.addInt("inter-op-threads", &inter_op_threads, "N",
           "size of the inter-op arena that runs forks and parallel nodes (default: cores)", 1,
           kInterOpThreadsRange.max);
  p.addInt("max-parallel-ops", &max_parallel_ops, "N",
           "run up to N independent nodes at once on the inter-op arena (default 1: serial)",
           kMaxParallelOpsRange.min, kMaxParallelOpsRange.max);
  p.addBool("verbose", &verbose, "show glog INFO messages (default: warnings and errors only)");
}

Options CommonFlags::options() const {
  Options o;
  if (no_default_plugins) o.plugins.clear();
  for (const std::string& p : plugins) {
    bool dup = false;
    for (const std::string& q : o.plugins) dup = dup || q == p;
    if (!dup) o.plugins.push_back(p);
  }
  // A plugin named explicitly must be found, even a default one.
  if (!plugins.empty()) o.default_plugins_optional = false;
  o.plugin_path = plugin_path;
  o.optimize_numerics = optimize_numerics;
  o.use_out_variants = use_out_variants;
  o.use_native = use_native;
  o.fallback_only = fallback_only;
  o.small_gemm = small_gemm;
  o.strict_inputs = strict_inputs;
  o.memory_planning = memory_planning;
  o.planner = planner;
  o.manage_output_tensors = manage_output_tensors;
  o.inplace_reuse = inplace_reuse;
  o.plan_kernel_scratch = plan_kernel_scratch;
  if (max_runtimes >= 0) o.max_runtimes = static_cast<size_t>(max_runtimes);
  if (runtime_idle_ms >= 0) o.runtime_idle_ms = runtime_idle_ms;
  o.inter_op_threads = static_cast<int>(inter_op_threads);
  o.max_parallel_ops = static_cast<int>(max_parallel_ops);
  return o;
}

namespace {
std::string joinList(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + v[i];
  return out + "]";
}
}  // namespace

std::string describeOptions(const Options& o) {
  std::ostringstream os;
  os << "plugins=" << joinList(o.plugins) << " default_plugins_optional=" << o.default_plugins_optional
     << " plugin_path=" << joinList(o.plugin_path) << " optimize_numerics=" << o.optimize_numerics
     << " use_out_variants=" << o.use_out_variants << " use_native=" << o.use_native
     << " fallback_only=" << o.fallback_only << " small_gemm=" << o.small_gemm << " strict_inputs=" << o.strict_inputs
     << " memory_planning=" << o.memory_planning << " planner=" << o.planner
     << " manage_output_tensors=" << o.manage_output_tensors << " inplace_reuse=" << o.inplace_reuse
     << " plan_kernel_scratch=" << o.plan_kernel_scratch << " max_runtimes=" << o.max_runtimes
     << " runtime_idle_ms=" << o.runtime_idle_ms << " max_parallel_ops=" << o.max_parallel_ops
     << " inter_op_threads=" << o.inter_op_threads;
  return os.str();
}

std::string optionsJson(const Options& o) {
  std::vector<std::string> plugins, path;
  for (const auto& p : o.plugins) plugins.push_back(json::str(p));
  for (const auto& p : o.plugin_path) path.push_back(json::str(p));
  return json::Object()
      .add("plugins", json::array(plugins))
      .add("default_plugins_optional", json::boolean(o.default_plugins_optional))
      .add("plugin_path", json::array(path))
      .add("optimize_numerics", json::boolean(o.optimize_numerics))
      .add("use_out_variants", json::boolean(o.use_out_variants))
      .add("use_native", json::boolean(o.use_native))
      .add("fallback_only", json::boolean(o.fallback_only))
      .add("small_gemm", json::boolean(o.small_gemm))
      .add("strict_inputs", json::boolean(o.strict_inputs))
      .add("memory_planning", json::boolean(o.memory_planning))
      .add("planner", json::str(o.planner))
      .add("manage_output_tensors", json::boolean(o.manage_output_tensors))
      .add("inplace_reuse", json::boolean(o.inplace_reuse))
      .add("plan_kernel_scratch", json::boolean(o.plan_kernel_scratch))
      .add("max_runtimes", json::num(static_cast<long long>(o.max_runtimes)))
      .add("runtime_idle_ms", json::num(static_cast<long long>(o.runtime_idle_ms)))
      .add("max_parallel_ops", json::num(static_cast<long long>(o.max_parallel_ops)))
      .add("inter_op_threads", json::num(static_cast<long long>(o.inter_op_threads)))
      .done();
}

}  // namespace brisk::cli
