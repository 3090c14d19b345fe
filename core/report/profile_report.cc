#include "core/report/profile_report.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <ostream>
#include <set>

#include "core/common/error.h"
#include "core/executor/compiled_module.h"
#include "core/executor/module.h"
#include "core/executor/run_options.h"
#include "core/graph/graph.h"
#include "core/report/format.h"
#include "core/report/json.h"
#include "core/report/stats.h"
#include "core/report/timing.h"

namespace brisk::report {
namespace {

// One run on a fresh argument vector (CompiledModule::run moves from its args).
void runOnce(const CompiledModule& module, const ModelInputs& inputs, const RunOptions& options) {
  (void)module.run(inputs.args, inputs.kwargs, options);
}

// Node text can be hundreds of characters (long constant lists); a table row keeps the head.
std::string clip(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

// The node's text, prefixed with its fork child ("[fork#0] ...") when it is not in the
// top module (fork children are CompiledModules named "<model>/fork#<i>").
std::string nodeText(const Profiler::Stat& s, const std::string& top) {
  std::string where = s.model.rfind(top, 0) == 0 ? s.model.substr(top.size()) : s.model;
  if (!where.empty() && where[0] == '/') where.erase(0, 1);
  return where.empty() ? s.node : "[" + where + "] " + s.node;
}

// The columns both profile tables share: time, share of kernel time, calls, kind, provider.
std::string statHeader() {
  return "  " + padLeft("us/run", 10) + padLeft("%", 7) + padLeft("calls/run", 11) + "  " + padRight("kind", 12) +
         padRight("provider", 13);
}
std::string statCells(const Profiler::Stat& s, double runs, double kernel_total) {
  return "  " + padLeft(fixed(s.total_us / runs, 1), 10) + padLeft(fixed(100.0 * s.total_us / kernel_total, 1), 7) +
         padLeft(fixed(static_cast<double>(s.calls) / runs, 1), 11) + "  " +
         padRight(s.kind.empty() ? "-" : s.kind, 12) + padRight(s.provider.empty() ? "-" : s.provider, 13);
}

std::string statJson(const Profiler::Stat& s, const ProfileReport& r, bool per_node) {
  json::Object o;
  if (per_node) o.add("model", json::str(s.model)).add("node", json::str(s.node));
  o.add("op", json::str(s.op))
      .add("kind", json::str(s.kind))
      .add("provider", json::str(s.provider))
      .add("calls", json::num(static_cast<long long>(s.calls)))
      .add("total_us", json::num(s.total_us))
      .add("us_per_run", json::num(r.runs ? s.total_us / static_cast<double>(r.runs) : 0.0));
  return o.done();
}

}  // namespace

double ProfileReport::overheadPerNodeNs() const {
  if (node_runs_per_run <= 0) return 0;
  return (unprofiled_p50_us - kernel_us_per_run) * 1e3 / node_runs_per_run;
}

ProfileReport profileModule(const Module& module, const ModelInputs& inputs, int64_t runs, double unprofiled_p50_us,
                            const std::string& trace_path) {
  BRISK_CHECK(runs >= 1, "profile: runs must be >= 1, got ", runs);
  ProfileReport r;
  r.model = module.name();
  r.runs = runs;
  // Every run below is served by this one compiled form, which is also what the
  // profiler's events name (fork children are its children()).
  const std::shared_ptr<const CompiledModule> top = module.compiled();
  // Warm-up: the first run records shapes and lays out the memory plan; it is not
  // representative of steady state.
  runOnce(*top, inputs, RunOptions{});
  if (unprofiled_p50_us < 0)
    unprofiled_p50_us = median(timeCalls([&] { runOnce(*top, inputs, RunOptions{}); }, runs, 0));
  r.unprofiled_p50_us = unprofiled_p50_us;

  Profiler profiler;
  RunOptions options;
  options.profiler = &profiler;
  r.profiled_run_us = median(timeCalls([&] { runOnce(*top, inputs, options); }, runs, 0));
  // Kernel time per run as the median over runs of each run's sum of kernel-node times (Profiler::isKernelNode):
  // a mean would let a few preempted or page-faulting runs (a shared machine) decide.
  // Events arrive in completion order; a run's own event (node == null) comes after
  // all of its nodes, fork children's included (aten::wait joins them first).
  size_t node_events = 0;
  std::set<uint32_t> threads;
  std::vector<double> per_run;
  double current = 0;
  for (const Profiler::Event& e : profiler.events()) {
    threads.insert(e.thread);
    if (!e.node) {
      if (e.module == top.get()) {
        per_run.push_back(current);
        current = 0;
      }
      continue;
    }
    ++node_events;
    if (Profiler::isKernelNode(*e.node)) current += static_cast<double>(e.end_ns - e.begin_ns) / 1e3;
  }
  r.has_forks = threads.size() > 1;
  r.node_runs_per_run = static_cast<double>(node_events) / static_cast<double>(runs);
  r.kernel_us_per_run = per_run.empty() ? 0 : median(per_run);
  r.kernel_us_mean_per_run = profiler.kernelMicros() / static_cast<double>(runs);
  r.by_node = profiler.byNode();
  r.by_op = profiler.byOp();

  if (!trace_path.empty()) {
    Profiler one;
    RunOptions trace_options;
    trace_options.profiler = &one;
    runOnce(*top, inputs, trace_options);
    std::ofstream out(trace_path);
    if (!out) throw Error("cannot write trace file: " + trace_path);
    one.writeChromeTrace(out);
    if (!out.flush()) throw Error("cannot write trace file: " + trace_path);
    r.trace_path = trace_path;
    r.trace_events = one.events().size();
  }
  return r;
}

void printProfile(std::ostream& os, const ProfileReport& r, size_t top) {
  const double runs = static_cast<double>(std::max<int64_t>(r.runs, 1));
  const double kernel_total = std::max(r.kernel_us_mean_per_run * runs, 1e-9);
  os << "profile: " << r.runs << " profiled runs, " << fixed(r.node_runs_per_run, 1)
     << " node executions per run, profiled run p50 " << fixed(r.profiled_run_us, 1) << " us\n";

  const size_t n_nodes = std::min(top, r.by_node.size());
  os << "\ntop " << n_nodes << " of " << r.by_node.size() << " nodes by time:\n"
     << statHeader() << padRight("op", 34) << "node\n";
  for (size_t i = 0; i < n_nodes; ++i) {
    const Profiler::Stat& s = r.by_node[i];
    os << statCells(s, runs, kernel_total) << padRight(s.op, 34) << clip(nodeText(s, r.model), 100) << "\n";
  }

  const size_t n_ops = std::min(top, r.by_op.size());
  os << "\ntop " << n_ops << " of " << r.by_op.size() << " ops by time:\n" << statHeader() << "op\n";
  for (size_t i = 0; i < n_ops; ++i) os << statCells(r.by_op[i], runs, kernel_total) << r.by_op[i].op << "\n";
  os << "(% of kernel time; control nodes (If/Loop/fork/wait) include the nodes they run)\n";

  os << "\nkernel time per run: " << fixed(r.kernel_us_per_run, 1) << " us median (mean " << fixed(r.kernel_us_mean_per_run, 1)
     << " us; kernel nodes (a delegate partition counts once), timed with the profiler's clock reads); unprofiled p50 run: " << fixed(r.unprofiled_p50_us, 1)
     << " us\n"
     << "framework overhead per node: (" << fixed(r.unprofiled_p50_us, 1) << " - " << fixed(r.kernel_us_per_run, 1)
     << ") us / " << fixed(r.node_runs_per_run, 1) << " nodes = " << fixed(r.overheadPerNodeNs(), 1) << " ns";
  if (r.has_forks) os << " (forks ran on other threads: kernel time sums threads, so this is not an overhead)";
  os << "\n";
  if (!r.trace_path.empty())
    os << "trace: " << r.trace_path << " (one run, " << r.trace_events
       << " events; open in https://ui.perfetto.dev or chrome://tracing)\n";
}

std::string profileJson(const ProfileReport& r, size_t top) {
  std::vector<std::string> nodes, ops;
  for (size_t i = 0; i < std::min(top, r.by_node.size()); ++i) nodes.push_back(statJson(r.by_node[i], r, true));
  for (size_t i = 0; i < std::min(top, r.by_op.size()); ++i) ops.push_back(statJson(r.by_op[i], r, false));
  return json::Object()
      .add("runs", json::num(static_cast<long long>(r.runs)))
      .add("node_runs_per_run", json::num(r.node_runs_per_run))
      .add("kernel_us_per_run", json::num(r.kernel_us_per_run))
      .add("kernel_us_mean_per_run", json::num(r.kernel_us_mean_per_run))
      .add("profiled_run_p50_us", json::num(r.profiled_run_us))
      .add("unprofiled_p50_us", json::num(r.unprofiled_p50_us))
      .add("overhead_per_node_ns", json::num(r.overheadPerNodeNs()))
      .add("has_forks", json::boolean(r.has_forks))
      .add("trace", r.trace_path.empty() ? "null" : json::str(r.trace_path))
      .add("nodes", json::array(nodes))
      .add("ops", json::array(ops))
      .done();
}

}  // namespace brisk::report
