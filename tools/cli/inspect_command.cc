// brisk inspect [MODEL] [--graph] [flags]
#include <algorithm>
#include <iostream>
#include <map>

#include "core/graph/graph.h"
#include "core/frontend/model_inputs.h"
#include "core/report/format.h"
#include "core/report/module_stats.h"
#include "tools/cli/command_preamble.h"
#include "tools/cli/commands.h"
#include "tools/cli/model_locator.h"
#include "tools/cli/common.h"
#include "tools/cli/options_flags.h"
#include "tools/cli/settings.h"

namespace brisk::cli {

using report::fixed;
using report::moduleStatsText;
using report::padRight;

namespace {

struct InspectFlags {
  CommonFlags common;
  bool graph = false;
  bool no_profile = false;
  std::string inputs;
  bool help = false;

  void addOwn(FlagParser& p) {
    p.addBool("graph", &graph, "also print the brisk graph (Graph::str())");
    p.addString("inputs", &inputs, "FILE", "inputs for the profile run (default: the model's <model>.inputs.pt)");
    p.addBool("no-profile", &no_profile, "do not run the model once to show its memory plan");
  }
  void addAll(FlagParser& p) {
    addOwn(p);
    common.addTo(p);
    p.addBool("help", &help, "show this help");
  }
};

// The per-node table (indented by block depth) and the "kernels:" count line.
void printNodes(const std::vector<NodeKernelInfo>& report) {
  size_t w_index = 1, w_op = 2, w_kind = 4, w_outputs = 7, w_provider = 8;
  for (const auto& n : report) {
    w_index = std::max(w_index, 2 * static_cast<size_t>(n.depth) + 1 + std::to_string(n.node_index).size());
    w_op = std::max(w_op, n.op.size());
    w_kind = std::max(w_kind, std::string(kernelKindName(n.kind)).size());
    w_outputs = std::max(w_outputs, std::string(outputContractName(n.outputs)).size());
    w_provider = std::max(w_provider, n.provider.size());
  }
  std::cout << "\nnodes (" << report.size() << "):\n"
            << "  " << padRight("#", w_index) << "  " << padRight("op", w_op) << "  " << padRight("kind", w_kind)
            << "  " << padRight("outputs", w_outputs) << "  " << padRight("provider", w_provider) << "  detail\n";
  size_t by_kind[kNumKernelKinds] = {};
  for (const auto& n : report) {
    std::string idx = std::string(2 * static_cast<size_t>(std::max(0, n.depth)), ' ') + "#" +
                      std::to_string(n.node_index);
    std::cout << "  " << padRight(idx, w_index) << "  " << padRight(n.op, w_op) << "  "
              << padRight(kernelKindName(n.kind), w_kind) << "  " << padRight(outputContractName(n.outputs), w_outputs)
              << "  " << padRight(n.provider, w_provider) << "  "
              << n.detail << "\n";
    by_kind[static_cast<int>(n.kind)]++;
  }
  std::cout << "\nkernels:";
  for (int k = 0; k < kNumKernelKinds; ++k)
    std::cout << " " << kernelKindName(static_cast<KernelKind>(k)) << "=" << by_kind[k];
  std::cout << " (total " << report.size() << ")\n";
}

// The ops that fell back to the TorchScript operator, most frequent first.
void printFallbackOps(const std::vector<NodeKernelInfo>& report) {
  std::map<std::string, size_t> fallback_ops;
  for (const auto& n : report)
    if (n.kind == KernelKind::kFallback) fallback_ops[n.op]++;
  std::cout << "fallback ops:";
  if (fallback_ops.empty()) {
    std::cout << " none\n";
    return;
  }
  std::cout << "\n";
  std::vector<std::pair<std::string, size_t>> ops(fallback_ops.begin(), fallback_ops.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [op, count] : ops) std::cout << "  " << op << " x" << count << "\n";
}

// Each delegate partition (a brisk::delegate node): its backend, what it compiled to, the
// layout conversions at its edges and the nodes it holds; those nodes are listed above
// too (indented), with the kernels that run them when the partition does not.
void printPartitions(const std::vector<NodeKernelInfo>& report) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < report.size(); ++i) {
    if (report[i].op != "brisk::delegate") continue;
    size_t inner = 0;
    for (size_t j = i + 1; j < report.size() && report[j].depth > report[i].depth; ++j) inner += 1;
    lines.push_back("  #" + std::to_string(report[i].node_index) + " (" + std::to_string(inner) + " nodes, " +
                    kernelKindName(report[i].kind) + "): " + report[i].detail);
  }
  std::cout << "partitions: " << lines.size() << "\n";
  for (const std::string& l : lines) std::cout << l << "\n";
}

// "passes: eliminate_dead_code=0 fold_constants=3 ... (off: inplace_reuse)".
void printPasses(const std::vector<PassResult>& passes) {
  std::cout << "passes:";
  std::string off;
  for (const PassResult& p : passes) {
    if (p.skipped) off += (off.empty() ? "" : ", ") + p.name;
    else std::cout << " " << p.name << "=" << p.changed;
  }
  std::cout << (off.empty() ? "" : " (off: " + off + ")") << "\n";
}

}  // namespace

std::string inspectUsage(bool common) {
  return "brisk inspect [MODEL] [--graph] [--inputs FILE] [--no-profile] [flags]\n"
         "  Prints the signature, the plugins loaded, and per node (indented by block depth)\n"
         "  its index, op, kernel kind, output contract, provider and detail; then counts per kind,\n"
         "  the nodes each load-time graph pass changed, the delegate partitions (backend, what each compiled to,\n"
         "  layout conversions at its edges), and the ops that fell back to the TorchScript operator;\n"
         "  then runs the model once on its inputs (the memory planner's profile run) and prints\n"
         "  the slab, lower bound and managed tensors.\n" +
         flagsUsage<InspectFlags>(common);
}

int inspectCommand(const std::vector<std::string>& args) {
  InspectFlags f;
  FlagParser parser;
  f.addAll(parser);
  const std::optional<std::vector<std::string>> positional = parseOrHelp(parser, args, f.help, inspectUsage);
  if (!positional) return kExitOk;
  applyCommonFlags(f.common, -1);
  LoadedModel m = loadModel(locateModel(modelArg(*positional, "inspect")), f.common.options());
  const Module& mod = *m.module;
  // The compiled form this command describes (the graph and signature live there).
  const std::shared_ptr<const CompiledModule> compiled = mod.compiled();

  std::cout << "model: " << m.location.name << " (" << m.location.path << ")\n"
            << "loaded in " << fixed(m.load_ms, 1) << " ms\n"
            << "signature: " << compiled->signature().str() << "\n"
            << "plugins: " << describePlugins() << "\n"
            << "options: " << describeOptions(mod.options()) << "\n";

  const std::vector<NodeKernelInfo> report = mod.kernelReport();
  printNodes(report);
  if (!f.no_profile) {
    // The memory plan exists only after a profile run on real inputs.
    ModelInputs inputs = loadInputs(locateInputs(m.location, f.inputs));
    coerceToSignature(inputs, compiled->signature());
    mod.run(inputs.args, inputs.kwargs);
  }
  std::cout << "module stats: " << moduleStatsText(mod.stats()) << "\n";
  printPasses(mod.passReport());
  printPartitions(report);
  printFallbackOps(report);
  if (f.graph) std::cout << "\ngraph:\n" << compiled->graph().str() << "\n";
  return kExitOk;
}

}  // namespace brisk::cli
