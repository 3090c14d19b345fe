#include "tools/cli/common.h"

#include <chrono>
#include <cstdio>

#include "core/kernels/plugin_loader.h"
#include "tools/cli/flags.h"
#include "tools/cli/json.h"

namespace brisk::cli {

double nowSeconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

LoadedModel loadModel(const ModelLocation& location, const Options& options) {
  LoadedModel m;
  m.location = location;
  double t0 = nowSeconds();
  m.module = Module::load(m.location.path, options);
  m.load_ms = (nowSeconds() - t0) * 1e3;
  return m;
}

std::string describeStats(const ModuleStats& s) {
  std::string out = "nodes=" + std::to_string(s.nodes);
  for (int k = 0; k < kNumKernelKinds; ++k)
    out += std::string(" ") + kernelKindName(static_cast<KernelKind>(k)) + "=" +
           std::to_string(s.kernels_by_kind[k]);
  out += " in-place=" + std::to_string(s.inplace_nodes);
  const MemoryStats& m = s.memory;
  out += " | memory: managed=" + std::to_string(s.managed_values) + " slab_bytes=" + std::to_string(m.slab_bytes) +
         " lower_bound=" + std::to_string(m.lower_bound) + " managed_tensors=" + std::to_string(m.managed_tensors) +
         " plans=" + std::to_string(m.plans) + " replans=" + std::to_string(m.replans) +
         " scratch_bytes=" + std::to_string(m.scratch_bytes) + " scratch_allocations=" + std::to_string(m.scratch_allocations);
  return out;
}

std::string statsJson(const ModuleStats& s) {
  json::Object kinds;
  for (int k = 0; k < kNumKernelKinds; ++k)
    kinds.add(kernelKindName(static_cast<KernelKind>(k)), json::num(static_cast<long long>(s.kernels_by_kind[k])));
  return json::Object()
      .add("nodes", json::num(static_cast<long long>(s.nodes)))
      .add("kernels_by_kind", kinds.done())
      .add("inplace_nodes", json::num(static_cast<long long>(s.inplace_nodes)))
      .add("retained_values", json::num(static_cast<long long>(s.retained_values)))
      .add("managed_values", json::num(static_cast<long long>(s.managed_values)))
      .add("slab_bytes", json::num(static_cast<long long>(s.memory.slab_bytes)))
      .add("lower_bound_bytes", json::num(static_cast<long long>(s.memory.lower_bound)))
      .add("managed_tensors", json::num(static_cast<long long>(s.memory.managed_tensors)))
      .add("replans", json::num(static_cast<long long>(s.memory.replans)))
      .add("scratch_bytes", json::num(static_cast<long long>(s.memory.scratch_bytes)))
      .add("scratch_allocations", json::num(static_cast<long long>(s.memory.scratch_allocations)))
      .done();
}

std::string describePlugins() {
  std::string out;
  for (const PluginInfo& p : loadedPlugins()) out += (out.empty() ? "" : ", ") + p.name + " (" + p.path + ")";
  return out.empty() ? "none" : out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string modelArg(const std::vector<std::string>& positional, const char* command) {
  if (positional.size() > 1)
    throw UsageError(std::string("'brisk ") + command + "' takes at most one MODEL, got '" + positional[1] + "'");
  return positional.empty() ? "" : positional[0];
}

}  // namespace brisk::cli
