#include "python/py_reports.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/executor/profiler.h"
#include "core/kernels/kernel.h"
#include "core/report/module_stats.h"

namespace brisk::python {
namespace {

// The table's kernel-kind group, and its name in Python (see statsDict).
constexpr const char* kKernelKindsGroup = "kernels_by_kind";
constexpr const char* kKernelKindsPythonKey = "kernels";

// "out-variant" -> "out_variant".
std::string underscored(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

py::dict statDict(const Profiler::Stat& s, int64_t runs, bool per_node) {
  py::dict d;
  if (per_node) {
    d["model"] = s.model;
    d["node"] = s.node;
  }
  d["op"] = s.op;
  d["kind"] = s.kind;
  d["provider"] = s.provider;
  d["calls"] = s.calls;
  d["total_us"] = s.total_us;
  d["us_per_run"] = runs > 0 ? s.total_us / static_cast<double>(runs) : 0.0;
  return d;
}

}  // namespace

py::dict statsDict(const ModuleStats& s) {
  py::dict d;
  for (const report::StatsGroup& g : report::moduleStatsFields(s)) {
    const bool kinds = g.name == kKernelKindsGroup;
    py::dict group;
    py::dict& target = g.name.empty() ? d : group;
    for (const auto& [name, value] : g.fields) target[py::str(kinds ? underscored(name) : name)] = value;
    if (!g.name.empty()) d[py::str(kinds ? std::string(kKernelKindsPythonKey) : g.name)] = group;
  }
  return d;
}

py::list passesList(const std::vector<PassResult>& passes) {
  py::list out;
  for (const PassResult& r : passes) {
    py::dict d;
    d["name"] = r.name;
    d["provider"] = r.provider;
    d["changed"] = r.changed;
    d["skipped"] = r.skipped;
    d["us"] = r.micros;
    out.append(d);
  }
  return out;
}

py::list kernelReportList(const std::vector<NodeKernelInfo>& nodes) {
  py::list out;
  for (const NodeKernelInfo& n : nodes) {
    py::dict d;
    d["index"] = n.node_index;
    d["node"] = n.node;
    d["op"] = n.op;
    d["kind"] = kernelKindName(n.kind);
    d["outputs"] = outputContractName(n.outputs);
    d["provider"] = n.provider;
    d["detail"] = n.detail;
    d["depth"] = n.depth;
    out.append(d);
  }
  return out;
}

py::dict profileDict(const report::ProfileReport& r) {
  py::list nodes, ops;
  for (const auto& s : r.by_node) nodes.append(statDict(s, r.runs, true));
  for (const auto& s : r.by_op) ops.append(statDict(s, r.runs, false));
  py::dict d;
  d["runs"] = r.runs;
  d["node_runs_per_run"] = r.node_runs_per_run;
  d["kernel_us_per_run"] = r.kernel_us_per_run;
  d["kernel_us_mean_per_run"] = r.kernel_us_mean_per_run;
  d["profiled_run_p50_us"] = r.profiled_run_us;
  d["unprofiled_p50_us"] = r.unprofiled_p50_us;
  d["overhead_per_node_ns"] = r.overheadPerNodeNs();
  d["has_forks"] = r.has_forks;
  d["trace_path"] = r.trace_path.empty() ? py::object(py::none()) : py::object(py::str(r.trace_path));
  d["nodes"] = nodes;
  d["ops"] = ops;
  return d;
}

}  // namespace brisk::python
