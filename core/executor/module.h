#pragma once
// A Module is one loaded model: immutable after load and shared by every thread.
// It owns the brisk Graph, the kernel chosen for every node, the execution plan
// (value slots, release points), the input signature, child Modules for prim::fork
// subgraphs, and a pool of Runtimes so run() can be called from any thread.
#include <ATen/core/ivalue.h>
#include <c10/util/intrusive_ptr.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/executor/execution_plan.h"
#include "core/kernels/kernel.h"
#include "core/common/options.h"
#include "core/executor/runtime.h"
#include "core/executor/runtime_pool.h"
#include "core/graph/signature.h"

namespace brisk {

class Graph;
class Runtime;
struct Registries;

// What serves one node, for `brisk inspect`.
struct NodeKernelInfo {
  uint32_t node_index;
  std::string node;      // one-line node text
  std::string op;        // registry key
  KernelKind kind;
  std::string provider;  // "core", "ops_cpu", "torchscript" (fallback), a plugin name
  std::string detail;    // kernel's own description
  int depth;             // nesting depth (0 = top block)
  bool in_place = false; // the kernel may write its result into a free input (core/graph/inplace_reuse.h)
};

struct ModuleStats {
  size_t nodes = 0;
  size_t kernels_by_kind[kNumKernelKinds] = {};
  size_t retained_values = 0;  // out-variant outputs reused across runs
  size_t managed_values = 0;   // of those, tensors the memory planner may place in a slab
  // Nodes whose kernel may write its result into a free input (Options::inplace_reuse).
  size_t inplace_nodes = 0;
  // Nodes the frontend computed once at load (constant folding of weight-only
  // subgraphs) instead of running them every time.
  size_t folded_nodes = 0;
  // Memory plan of the Runtime (pooled or caller-owned) that most recently computed a
  // layout; all zero before the first run. Fork children report their own.
  MemoryStats memory;
  RuntimePoolStats pool;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  // Loads a TorchScript file (torch.jit.save output): load, eval, freeze, clean-up
  // passes, conversion, kernel choice. Throws brisk::Error on any problem.
  static std::shared_ptr<Module> load(const std::string& path, const Options& options = {},
                                      Registries* registries = nullptr);
  // Builds a Module from TorchScript IR text (as printed by the JIT) through the same
  // clean-up passes and conversion; for tests and experiments.
  static std::shared_ptr<Module> fromIR(const std::string& ir, const Options& options = {},
                                        const std::string& name = "ir", Registries* registries = nullptr);
  // Builds a Module from an already converted Graph (fork children, tests).
  static std::shared_ptr<Module> fromGraph(std::shared_ptr<const Graph> graph, Signature signature,
                                           const Options& options, Registries* registries,
                                           std::shared_ptr<void> keepalive = nullptr);
  ~Module();

  // Thread-safe: borrows a Runtime from the pool for the duration of the call.
  c10::IValue run(std::vector<c10::IValue> args, const Kwargs& kwargs = {}) const;
  // The same with per-call options (task launcher for forks, profiler).
  c10::IValue run(std::vector<c10::IValue> args, const Kwargs& kwargs, const RunOptions& options) const;
  // Runs the graph inline on the calling thread and its prim::fork tasks on `launcher`
  // (empty: the inter-op arena); returns a future holding the output, or the
  // brisk::Error of a failed run (model errors are not thrown). The graph's aten::wait
  // nodes join its forks before it returns, so the future is already complete on
  // return: what runAsync adds is the future interface and the caller's launcher.
  c10::intrusive_ptr<c10::ivalue::Future> runAsync(std::vector<c10::IValue> args, const Kwargs& kwargs = {},
                                                   TaskLauncher launcher = {}) const;
  // A Runtime owned by the caller (keeps the Module alive).
  std::unique_ptr<Runtime> createRuntime() const;

  const std::string& name() const { return name_; }
  const Graph& graph() const { return *graph_; }
  const Signature& signature() const { return signature_; }
  const Options& options() const { return options_; }
  const ExecutionPlan& plan() const { return plan_; }
  // Per node (including nodes inside sub-blocks), in pre-order.
  std::vector<NodeKernelInfo> kernelReport() const;
  // Child Modules built for prim::fork subgraphs, in node order.
  const std::vector<std::shared_ptr<Module>>& children() const { return children_; }
  ModuleStats stats() const;
  // Called by a Runtime after a run in which one of its blocks (re)planned its slab.
  void publishMemoryStats(const MemoryStats& s) const;

 private:
  friend class ModuleBuilder;
  Module(std::string name, Options options);

  std::string name_;
  Options options_;
  std::shared_ptr<const Graph> graph_;
  std::shared_ptr<void> keepalive_;  // the JIT graph/module the fallback's Operations refer to
  Signature signature_;
  c10::TypePtr output_type_;  // of run's result (runAsync's future)
  ExecutionPlan plan_;
  std::vector<std::shared_ptr<Module>> children_;
  std::unique_ptr<RuntimePool> pool_;
  mutable std::mutex memory_mu_;  // taken only when a layout changes, never per run
  mutable MemoryStats memory_stats_;
};

}  // namespace brisk
