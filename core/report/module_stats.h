#pragma once
// The one field table of ModuleStats. The brisk CLI prints it as moduleStatsText and
// writes it as moduleStatsJson (`bench --json`); the Python binding's Module.stats()
// builds its dict from moduleStatsFields too (python/py_reports.h). So every host shows
// the same fields, and a counter added here reaches all of them.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/executor/compiled_module.h"

namespace brisk::report {

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

}  // namespace brisk::report
