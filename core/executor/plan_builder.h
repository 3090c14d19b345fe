#pragma once
// Load time: turns a compiled module's Graph into its ExecutionPlan.
#include <memory>
#include <vector>

#include "core/executor/compiled_module.h"
#include "core/graph/graph.h"
#include "core/kernels/kernel_registry.h"

namespace brisk {

class BlockLiveness;

// The build context core's own kernels get: the plugin API's, plus what only the
// executor has. Every context PlanBuilder hands a factory is one.
class ModuleBuildContext : public KernelBuildContext {
 public:
  // Compiles a child module for a subgraph (prim::fork), with the same options and
  // registries. Built once at load and shared by every run.
  virtual std::shared_ptr<const CompiledModule> buildChild(const Graph& subgraph) = 0;
  // `b` as the executor's context; throws brisk::Error for any other.
  static ModuleBuildContext& of(KernelBuildContext& b);
};

// Builds a compiled module's execution plan: chooses every node's kernel, compiles
// blocks into flat step arrays, decides which outputs are reused across runs and where
// each value dies. Load-time only: it writes `plan`, which the compiled module owns and
// never changes afterwards.
class PlanBuilder {
 public:
  PlanBuilder(std::shared_ptr<const Graph> graph, const Options& options, std::shared_ptr<void> keepalive, Registries& registries,
              ExecutionPlan& plan)
      : graph_(std::move(graph)), options_(options), keepalive_(std::move(keepalive)), registries_(registries), plan_(plan) {}

  // Fills the plan; returns the child modules compiled for prim::fork subgraphs.
  std::vector<std::shared_ptr<const CompiledModule>> build();

  // Compiles `block` into the plan (a nested block as well as the top one).
  const ExecBlock* compileBlock(const Block& block);
  // compileBlock, and the BlockRunner a higher-order kernel holds for it.
  const BlockRunner* compileNestedBlock(const Block& block);
  std::shared_ptr<const CompiledModule> buildChild(const Graph& subgraph);
  const std::vector<const Kernel*>& kernelOfNode() const { return kernel_of_node_; }
  uint32_t reserveKernelState() { return plan_.num_kernel_states++; }
  const Options& options() const { return options_; }
  const std::string& modelName() const { return graph_->name(); }

 private:
  std::unique_ptr<Kernel> chooseKernel(const Node& node);
  void choosePlanner();
  void decideRetention();
  void addReleases(ExecBlock& eb, const BlockLiveness& live);
  uint32_t pushIndices(const std::vector<Value*>& values) {
    auto begin = static_cast<uint32_t>(plan_.indices.size());
    for (const Value* v : values) plan_.indices.push_back(v->id());
    return begin;
  }

  std::shared_ptr<const Graph> graph_;  // children share its ownership (it owns their subgraphs)
  const Options& options_;
  std::shared_ptr<void> keepalive_;  // handed to the children
  Registries& registries_;
  ExecutionPlan& plan_;
  std::vector<uint8_t> escapes_;
  std::vector<const Kernel*> kernel_of_node_;
  std::vector<std::shared_ptr<const CompiledModule>> children_;
};

// A node whose kernel may write its result into a free input (core/graph/inplace_reuse.h):
// annotated, and served by a kernel whose contract says so (a fallback runs the
// functional op).
bool runsInPlace(const Node& n, const Kernel& k);
// Whether core keeps a kernel's outputs between runs (and lets the memory plan place
// them): from its OutputContract and the options, never from its kind.
bool keepsOutputs(const Kernel& k, const Options& options);

}  // namespace brisk
