#pragma once
// Load time: turns a Module's Graph into its ExecutionPlan.
#include <memory>
#include <vector>

#include "core/executor/module.h"
#include "core/graph/graph.h"
#include "core/kernels/kernel_registry.h"

namespace brisk {

class BlockLiveness;

// The build context core's own kernels get: the plugin API's, plus what only the
// executor has. Every context ModuleBuilder hands a factory is one.
class ModuleBuildContext : public KernelBuildContext {
 public:
  // Builds a child Module for a subgraph (prim::fork), with the same options and
  // registries. Built once at load and shared by every run.
  virtual std::shared_ptr<Module> buildChild(const Graph& subgraph) = 0;
  // `b` as the executor's context; throws brisk::Error for any other.
  static ModuleBuildContext& of(KernelBuildContext& b);
};

// Builds a Module's execution plan: chooses every node's kernel, compiles blocks into
// flat step arrays, decides which outputs are reused across runs and where each value
// dies. Load-time only.
class ModuleBuilder {
 public:
  ModuleBuilder(Module& m, Registries& registries) : m_(m), registries_(registries) {}

  void build();

  // Compiles `block` into the plan (a nested block as well as the top one).
  const ExecBlock* compileBlock(const Block& block);
  // compileBlock, and the BlockRunner a higher-order kernel holds for it.
  const BlockRunner* compileNestedBlock(const Block& block);
  std::shared_ptr<Module> buildChild(const Graph& subgraph);
  const std::vector<const Kernel*>& kernelOfNode() const { return kernel_of_node_; }
  uint32_t reserveKernelState() { return m_.plan_.num_kernel_states++; }

 private:
  std::unique_ptr<Kernel> chooseKernel(const Node& node);
  void choosePlanner();
  void decideRetention();
  void addReleases(ExecBlock& eb, const BlockLiveness& live);
  uint32_t pushIndices(const std::vector<Value*>& values) {
    auto begin = static_cast<uint32_t>(m_.plan_.indices.size());
    for (const Value* v : values) m_.plan_.indices.push_back(v->id());
    return begin;
  }

  Module& m_;
  Registries& registries_;
  std::vector<uint8_t> escapes_;
  std::vector<const Kernel*> kernel_of_node_;
};

// A node whose kernel may write its result into a free input (core/graph/inplace_reuse.h):
// annotated, and served by a plugin kernel (a fallback runs the functional op).
bool runsInPlace(const Node& n, const Kernel& k);

}  // namespace brisk
