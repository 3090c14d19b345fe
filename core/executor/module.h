#pragma once
// A Module is one loaded model: immutable after load and shared by every thread.
// It owns the brisk Graph, the kernel chosen for every node, the execution plan
// (value slots, release points), the input signature, child Modules for prim::fork
// subgraphs, and a pool of Runtimes so run() can be called from any thread.
#include <ATen/core/ivalue.h>
#include <c10/util/intrusive_ptr.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/plan/execution_plan.h"
#include "core/kernels/kernel.h"
#include "core/common/options.h"
#include "core/executor/runtime.h"
#include "core/executor/runtime_pool.h"
#include "core/frontend/frontend_result.h"
#include "core/frontend/weights.h"
#include "core/graph/graph_pass.h"
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

// A Module that load() returns is a handle on its current *generation*: the Module built
// from the file with the weights in force. swapWeights builds the next generation and
// publishes it atomically; every call below is served by the generation current when it
// starts, so a run in flight keeps the weights it started with. Modules built from IR or
// a Graph (and fork children) are generations themselves and cannot swap weights.
class Module : public std::enable_shared_from_this<Module> {
 public:
  // Loads a TorchScript file (torch.jit.save output) or a PT2 archive (torch.export),
  // told apart by content: load, eval, freeze, clean-up passes, conversion, kernel
  // choice. Throws brisk::Error on any problem.
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
  // A Runtime owned by the caller (keeps the Module alive). It stays on the weights
  // current at its creation: a later swapWeights does not reach it.
  std::unique_ptr<Runtime> createRuntime() const;

  // Weights at run time. The model file's named parameters and buffers (for PT2 also
  // its constants) by state-dict name, e.g. "fc.weight"; empty for a Module not loaded
  // from a file.
  const std::vector<WeightInfo>& weights() const;
  // Replaces the named weights for every later run: builds the next generation from the
  // model file with all replacements so far applied before any load-time fold (so a
  // folded conv-bn or a packed GEMM weight sees the new values), then publishes it in one
  // atomic store. Names, dtypes and sizes are checked first; on any error the Module is
  // unchanged. The tensors are copied. Costs about one load; concurrent runs go on
  // meanwhile. Throws brisk::Error.
  void swapWeights(const WeightMap& replacements);
  // The same with every named weight of another file of the same model (TorchScript or
  // PT2, either kind for either).
  void swapWeightsFrom(const std::string& path);
  // 0 after load, then +1 per successful swap.
  uint64_t weightsVersion() const;
  // The Module serving calls now: this one, unless it is a handle that load() returned.
  // Runtimes and profiler events name the generation they ran on.
  std::shared_ptr<const Module> generation() const;

  const std::string& name() const { return name_; }
  const Options& options() const { return options_; }
  // These four describe the current generation; after a swapWeights the references stay
  // valid while that generation serves a run or is held by a Runtime (same structure,
  // other constants).
  const Graph& graph() const { return *current().graph_; }
  const Signature& signature() const { return current().signature_; }
  const ExecutionPlan& plan() const { return current().plan_; }
  // Child Modules built for prim::fork subgraphs, in node order.
  const std::vector<std::shared_ptr<Module>>& children() const { return current().children_; }
  // Per node (including nodes inside sub-blocks), in pre-order.
  std::vector<NodeKernelInfo> kernelReport() const;
  // The load-time graph passes in the order they ran, with what each changed.
  std::vector<PassResult> passReport() const { return current().passes_; }
  ModuleStats stats() const;
  // Called by a Runtime after a run in which one of its blocks (re)planned its slab.
  void publishMemoryStats(const MemoryStats& s) const;

 private:
  friend class ModuleBuilder;
  struct Source;
  Module(std::string name, Options options);
  // A frontend's graph through the plugins' and core's graph passes, then fromGraph.
  static std::shared_ptr<Module> fromFrontend(FrontendResult r, const Options& options, Registries* registries);
  const Module& current() const { return source_ ? *current_.load() : *this; }

  std::string name_;
  Options options_;
  std::shared_ptr<const Graph> graph_;
  std::shared_ptr<void> keepalive_;  // the JIT graph/module the fallback's Operations refer to
  Signature signature_;
  c10::TypePtr output_type_;  // of run's result (runAsync's future)
  ExecutionPlan plan_;
  std::vector<std::shared_ptr<Module>> children_;
  std::vector<PassResult> passes_;
  std::unique_ptr<RuntimePool> pool_;
  RuntimePool::Lease lease() const;  // pool_->borrow(), its errors naming this model
  mutable std::mutex memory_mu_;  // taken only when a layout changes, never per run
  mutable MemoryStats memory_stats_;
  // Handles only (load()): how to build a generation, and the one serving now.
  std::unique_ptr<Source> source_;
  std::atomic<std::shared_ptr<const Module>> current_;
};

}  // namespace brisk
