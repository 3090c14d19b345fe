#pragma once
// What Module.stats(), passes(), inspect() and profile() return: brisk's reports as
// Python dicts and lists. The stats dict is built from core/report's one ModuleStats
// field table and profile() converts core/report's ProfileReport, so Python shows the
// fields the CLI shows. Its own file so that the bindings only convert arguments and
// release the GIL, and every report's Python shape is written in one place. Needs the
// GIL.
#include <pybind11/pybind11.h>

#include <vector>

#include "core/executor/compiled_module.h"
#include "core/graph/graph_pass.h"
#include "core/report/profile_report.h"

namespace brisk::python {

namespace py = pybind11;

// {"nodes": ..., "inplace_nodes": ..., ..., "kernels": {...}, "memory": {...}, "pool": {...}}:
// every field of report::moduleStatsFields under its own name, except that the
// kernels_by_kind group is "kernels" and its keys spell '-' as '_' ("out_variant"), the
// names Python has always used.
py::dict statsDict(const ModuleStats& s);

// The load-time graph passes in the order they ran: name, provider, changed, skipped, us.
py::list passesList(const std::vector<PassResult>& passes);

// Per node: index, node, op, kind, provider, detail, depth.
py::list kernelReportList(const std::vector<NodeKernelInfo>& nodes);

// The profile report as Module.profile() documents it ("nodes"/"ops" rows with
// us_per_run, "trace_path" None when no trace was written).
py::dict profileDict(const report::ProfileReport& r);

}  // namespace brisk::python
