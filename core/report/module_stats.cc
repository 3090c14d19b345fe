#include "core/report/module_stats.h"

#include "core/kernels/kernel.h"
#include "core/report/json.h"

namespace brisk::report {

std::vector<StatsGroup> moduleStatsFields(const ModuleStats& s) {
  StatsGroup top{"",
                 {{"nodes", s.nodes},
                  {"inplace_nodes", s.inplace_nodes},
                  {"folded_nodes", s.folded_nodes},
                  {"retained_values", s.retained_values},
                  {"managed_values", s.managed_values}}};
  StatsGroup kinds{"kernels_by_kind", {}};
  for (int k = 0; k < kNumKernelKinds; ++k)
    kinds.fields.emplace_back(kernelKindName(static_cast<KernelKind>(k)), s.kernels_by_kind[k]);
  const MemoryStats& m = s.memory;
  StatsGroup memory{"memory",
                    {{"slab_bytes", m.slab_bytes},
                     {"lower_bound", m.lower_bound},
                     {"managed_tensors", m.managed_tensors},
                     {"plans", m.plans},
                     {"replans", m.replans},
                     {"evictions", m.evictions},
                     {"scratch_bytes", m.scratch_bytes},
                     {"scratch_allocations", m.scratch_allocations}}};
  const RuntimePoolStats& p = s.pool;
  StatsGroup pool{"pool",
                  {{"live", p.live},
                   {"idle", p.idle},
                   {"peak", p.peak},
                   {"created", p.created},
                   {"freed", p.freed},
                   {"waits", p.waits}}};
  return {top, kinds, memory, pool};
}

std::string moduleStatsText(const ModuleStats& s) {
  std::string out;
  for (const StatsGroup& g : moduleStatsFields(s)) {
    if (!g.name.empty()) out += " | " + g.name + ":";
    for (const auto& [name, value] : g.fields) out += (out.empty() ? "" : " ") + name + "=" + std::to_string(value);
  }
  return out;
}

std::string moduleStatsJson(const ModuleStats& s) {
  json::Object top;
  for (const StatsGroup& g : moduleStatsFields(s)) {
    json::Object group;
    json::Object& target = g.name.empty() ? top : group;
    for (const auto& [name, value] : g.fields) target.add(name, json::num(static_cast<long long>(value)));
    if (!g.name.empty()) top.add(g.name, group.done());
  }
  return top.done();
}

}  // namespace brisk::report
