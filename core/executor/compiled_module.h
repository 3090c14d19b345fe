#pragma once
// A CompiledModule is one model compiled for running: the brisk Graph, the kernel chosen
// for every node, the execution plan (value slots, release points, memory), the input
// signature, child CompiledModules for prim::fork subgraphs, and a pool of Runtimes so
// run() can be called from any thread. It is immutable once built (only the memory
// statistics its Runtimes publish change) and shared by every thread.
//
// A model handle (Module, module.h) holds one of these at a time and hands it out as a
// shared pointer: whoever needs the graph, the plan or a Runtime past one call keeps the
// pointer, and a weight swap cannot free what they hold.
#include <ATen/core/ivalue.h>
#include <c10/util/intrusive_ptr.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/common/options.h"
#include "core/executor/learned_inputs.h"
#include "core/executor/run_options.h"
#include "core/executor/runtime_pool.h"
#include "core/frontend/frontend_result.h"
#include "core/graph/graph_pass.h"
#include "core/graph/signature.h"
#include "core/kernels/kernel.h"
#include "core/memory/memory_plan.h"
#include "core/plan/execution_plan.h"

namespace brisk {

class Graph;
class Runtime;
struct Registries;

// What serves one node, for `brisk inspect`.
struct NodeKernelInfo {
  uint32_t node_index;
  std::string node;      // one-line node text
  std::string op;        // registry key
  KernelKind kind;              // where the kernel comes from
  OutputContract outputs;       // what it does with its outputs' memory
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

class CompiledModule : public std::enable_shared_from_this<CompiledModule> {
 public:
  // Compiles an already converted Graph: loads the plugins the options name, chooses
  // every node's kernel and builds the plan. `keepalive` holds what the fallback
  // kernels' JIT operations point into; `passes` is the graph passes' report.
  // Throws brisk::Error on any problem.
  static std::shared_ptr<const CompiledModule> build(std::shared_ptr<const Graph> graph, Signature signature,
                                                     const Options& options, Registries* registries,
                                                     std::shared_ptr<void> keepalive = nullptr,
                                                     std::vector<PassResult> passes = {});
  // A frontend's graph through the plugins' and core's graph passes, then build().
  static std::shared_ptr<const CompiledModule> fromFrontend(FrontendResult r, const Options& options,
                                                            Registries* registries);
  ~CompiledModule();
  CompiledModule(const CompiledModule&) = delete;
  CompiledModule& operator=(const CompiledModule&) = delete;

  // Thread-safe: borrows a Runtime from the pool for the duration of the call.
  c10::IValue run(std::vector<c10::IValue> args, const Kwargs& kwargs = {}, const RunOptions& options = {}) const;
  // See Module::runAsync.
  c10::intrusive_ptr<c10::ivalue::Future> runAsync(std::vector<c10::IValue> args, const Kwargs& kwargs,
                                                   TaskLauncher launcher) const;
  // A Runtime owned by the caller; it keeps this CompiledModule alive.
  std::unique_ptr<Runtime> createRuntime() const;

  const std::string& name() const { return name_; }
  const Options& options() const { return options_; }
  const Graph& graph() const { return *graph_; }
  const Signature& signature() const { return signature_; }
  const ExecutionPlan& plan() const { return plan_; }
  // Built for prim::fork subgraphs, in node order.
  const std::vector<std::shared_ptr<const CompiledModule>>& children() const { return children_; }
  // Per node (including nodes inside sub-blocks), in pre-order.
  std::vector<NodeKernelInfo> kernelReport() const;
  // The load-time graph passes in the order they ran, with what each changed.
  const std::vector<PassResult>& passReport() const { return passes_; }
  ModuleStats stats() const;
  // Called by a Runtime after a run in which one of its blocks (re)planned its slab.
  void publishMemoryStats(const MemoryStats& s) const;
  // The strict input checks' specs, which the first successful run completes.
  LearnedInputs& learnedInputs() const { return learned_inputs_; }

 private:
  CompiledModule(std::shared_ptr<const Graph> graph, Signature signature, Options options,
                 std::shared_ptr<void> keepalive, std::vector<PassResult> passes);
  RuntimePool::Lease lease() const;  // pool_->borrow(), its errors naming this model

  const std::string name_;
  const Options options_;
  const std::shared_ptr<const Graph> graph_;
  const std::shared_ptr<void> keepalive_;  // the JIT graph/module the fallback's Operations refer to
  const Signature signature_;
  const std::vector<PassResult> passes_;
  mutable LearnedInputs learned_inputs_;  // of signature_: declared after it
  // Written once, by the plan builder inside build(); read-only afterwards.
  ExecutionPlan plan_;
  std::vector<std::shared_ptr<const CompiledModule>> children_;
  c10::TypePtr output_type_;  // of run's result (runAsync's future)
  std::unique_ptr<RuntimePool> pool_;
  mutable std::mutex memory_mu_;  // taken only when a layout changes, never per run
  mutable MemoryStats memory_stats_;
};

}  // namespace brisk
