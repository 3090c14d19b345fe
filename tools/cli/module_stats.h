#pragma once
// The one rendering of ModuleStats in the brisk CLI. Every command that shows stats
// prints moduleStatsText and `bench --json` writes moduleStatsJson; both come from
// moduleStatsFields, so text and JSON always carry the same fields under the same names.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/executor/module.h"

namespace brisk::cli {

// A named group of counters; the first group (name "") holds the top-level ones. The
// groups follow ModuleStats' members: kernels_by_kind, memory, pool.
struct StatsGroup {
  std::string name;
  std::vector<std::pair<std::string, uint64_t>> fields;
};
std::vector<StatsGroup> moduleStatsFields(const ModuleStats& s);

// "nodes=5 inplace_nodes=0 ... | kernels_by_kind: out-variant=3 ... | memory: slab_bytes=..."
std::string moduleStatsText(const ModuleStats& s);
// {"nodes": 5, ..., "kernels_by_kind": {"out-variant": 3, ...}, "memory": {...}, "pool": {...}}
std::string moduleStatsJson(const ModuleStats& s);

}  // namespace brisk::cli
