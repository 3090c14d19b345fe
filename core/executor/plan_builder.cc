#include "core/executor/plan_builder.h"

#include <ATen/core/function_schema.h>

#include <algorithm>

#include "core/common/error.h"
#include "core/executor/compiled_block.h"
#include "core/plan/parallel_plan.h"
#include "core/graph/escape_analysis.h"
#include "core/graph/graph.h"
#include "core/graph/liveness.h"
#include "core/kernels/fallback_kernel.h"
#include "core/kernels/kernel_registry.h"
#include "core/memory/memory_plan.h"
#include "planners/registry.h"

namespace brisk {

namespace {

class BuildContext final : public ModuleBuildContext {
 public:
  BuildContext(PlanBuilder& b, const Node& n) : b_(b), n_(n) {}
  const Node& node() const override { return n_; }
  const Options& options() const override { return b_.options(); }
  const std::string& modelName() const override { return b_.modelName(); }
  const BlockRunner* compileBlock(const Block& block) override { return b_.compileNestedBlock(block); }
  std::shared_ptr<const CompiledModule> buildChild(const Graph& subgraph) override { return b_.buildChild(subgraph); }
  uint32_t reserveKernelState() override { return b_.reserveKernelState(); }

 private:
  PlanBuilder& b_;
  const Node& n_;
};

// Ops whose kernels the executor itself depends on; never sent to the fallback.
bool isStructural(const Node& n) {
  return n.kind() == "prim::If" || n.kind() == "prim::Loop" || n.kind() == "prim::fork" ||
         n.kind() == "aten::wait" || n.kind() == kDelegateKind;
}

std::unique_ptr<Kernel> tryRegistry(const KernelRegistry& reg, KernelBuildContext& ctx) {
  for (const auto& entry : reg.lookup(ctx.node().key())) {
    if (auto k = entry.factory(ctx)) {
      k->setProvider(entry.provider);
      return k;
    }
  }
  return nullptr;
}

}  // namespace

ModuleBuildContext& ModuleBuildContext::of(KernelBuildContext& b) {
  if (auto* m = dynamic_cast<ModuleBuildContext*>(&b)) return *m;
  throw Error("this kernel is core's own and builds only inside a Module's load");
}

const BlockRunner* PlanBuilder::compileNestedBlock(const Block& block) {
  const ExecBlock* eb = compileBlock(block);
  std::vector<std::unique_ptr<const BlockRunner>>& runners = plan_.runners;
  runners.push_back(std::make_unique<CompiledBlock>(*eb));
  return runners.back().get();
}

bool runsInPlace(const Node& n, const Kernel& k) {
  return n.reusableInput() >= 0 && k.outputs() == OutputContract::kIntoInput;
}

bool keepsOutputs(const Kernel& k, const Options& options) {
  switch (k.outputs()) {
    case OutputContract::kReused: return true;
    case OutputContract::kCaptured: return options.memory_planning;
    case OutputContract::kFresh:
    case OutputContract::kIntoInput: return false;
  }
  return false;
}

std::vector<std::shared_ptr<const CompiledModule>> PlanBuilder::build() {
  choosePlanner();
  escapes_ = findEscapingValues(*graph_);
  kernel_of_node_.assign(graph_->numNodes(), nullptr);
  compileBlock(*graph_->top());
  decideRetention();
  ExecutionPlan& plan = plan_;
  for (ExecBlock& b : plan.blocks) {
    const BlockLiveness live(*b.source, plan.retained);
    addReleases(b, live);
    if (options_.memory_planning) planManagedValues(*graph_, live, plan.retained, b);
    // Only the top block runs in parallel: If/Loop bodies run inside one step.
    if (b.id == 0 && options_.max_parallel_ops > 1) planParallelBlock(live, b);
  }
  plan.num_slots = graph_->numValues();
  for (const Value* c : graph_->constants()) plan.constants.emplace_back(c->id(), c->constant());
  for (uint32_t id = 0; id < plan.num_slots; ++id)
    if (!graph_->value(id)->isConstant() && !plan.retained[id]) plan.cleanup.push_back(id);
  return std::move(children_);
}

std::unique_ptr<Kernel> PlanBuilder::chooseKernel(const Node& node) {
  const Options& o = options_;
  BuildContext ctx(*this, node);
  const Error::Where where{graph_->name(), node.describe(), node.key()};
  try {
    const bool structural = isStructural(node);
    if (!o.fallback_only || structural) {
      if (o.use_out_variants && !structural)
        if (auto k = tryRegistry(registries_.out_variant, ctx)) return k;
      if (o.use_native || structural)
        if (auto k = tryRegistry(registries_.native, ctx)) return k;
    }
    if (auto k = makeFallbackKernel(node)) {
      k->setProvider("torchscript");
      return k;
    }
    // Ops the interpreter runs as instructions (prim::ListConstruct, aten::warn, ...)
    // have no JIT operator to fall back to: a native kernel is the only way to run them,
    // so --no-native and --fallback-only give way rather than refuse the model.
    if (!o.use_native || o.fallback_only)
      if (auto k = tryRegistry(registries_.native, ctx)) return k;
  } catch (const Error& e) {
    throw e.withModel(graph_->name()).withNode(node.describe(), node.key());
  } catch (const std::exception& e) {
    throw Error(where, "building its kernel failed: " + describeException(e));
  }
  throw Error(where, "no kernel and no fallback can run this op (node: " + node.str() + ")");
}

const ExecBlock* PlanBuilder::compileBlock(const Block& block) {
  ExecutionPlan& plan = plan_;
  plan.blocks.emplace_back();
  ExecBlock* eb = &plan.blocks.back();  // deque: stays valid while sub-blocks are added
  eb->source = &block;
  eb->id = static_cast<uint32_t>(plan.blocks.size() - 1);
  for (const Value* p : block.params()) eb->params.push_back(p->id());
  for (const Node* n : block.nodes()) {
    std::unique_ptr<Kernel> k = chooseKernel(*n);
    Step s{};
    s.kernel = k.get();
    s.node = n;
    s.num_in = static_cast<uint32_t>(n->inputs().size());
    s.in_begin = pushIndices(n->inputs());
    s.num_out = static_cast<uint32_t>(n->outputs().size());
    s.out_begin = pushIndices(n->outputs());
    kernel_of_node_[n->index()] = k.get();
    plan.kernels.push_back(std::move(k));
    eb->steps.push_back(s);
  }
  const auto& returns = block.returns();
  for (size_t i = 0; i < returns.size(); ++i) {
    const Value* r = returns[i];
    eb->returns.push_back(r->id());
    // A value returned more than once (`return (a, a)`, a loop carrying (x, x)) is moved
    // out only at its last position; the earlier ones copy it (takeReturn runs in order).
    bool returned_later = std::find(returns.begin() + i + 1, returns.end(), r) != returns.end();
    eb->return_is_local.push_back(!r->isConstant() && r->owningBlock() == &block && !returned_later);
  }
  return eb;
}

std::shared_ptr<const CompiledModule> PlanBuilder::buildChild(const Graph& subgraph) {
  std::vector<Argument> args;
  for (const Value* v : subgraph.inputs())
    args.push_back(Argument{v->name().empty() ? v->ref() : v->name(), v->type(), std::nullopt});
  // The child shares ownership of the parent's graph (which owns the subgraph) and of
  // the JIT graph its fallback Operations came from.
  std::shared_ptr<const Graph> g(graph_, &subgraph);
  Options child_options = options_;
  child_options.strict_inputs = false;  // the parent checked the model's inputs
  // A capped child pool could block arena workers in borrow() while the runtimes they
  // wait for belong to tasks waiting on forks that need those workers: only the top
  // Module's callers are capped.
  child_options.max_runtimes = 0;
  auto child = CompiledModule::build(g, Signature(subgraph.name(), std::move(args)), child_options, &registries_,
                                     keepalive_);
  children_.push_back(child);
  return child;
}

void PlanBuilder::choosePlanner() {
  const std::string& name = options_.planner;
  const auto& registry = planners::PlannerRegistry::global();
  plan_.layout = registry.lookup(name);
  if (plan_.layout) return;
  std::string valid;
  for (const std::string& n : registry.names()) valid += (valid.empty() ? "" : ", ") + n;
  throw Error(Error::Where{graph_->name(), "", ""}, "unknown memory planner '" + name + "' (valid: " + valid + ")");
}

void PlanBuilder::decideRetention() {
  ExecutionPlan& plan = plan_;
  plan.retained.assign(graph_->numValues(), 0);
  for (const Node* n : graph_->allNodes()) {
    const Kernel* k = kernel_of_node_[n->index()];
    if (!k || !keepsOutputs(*k, options_)) continue;
    const c10::FunctionSchema* s = n->schema();
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const Value* v = n->output(i);
      // An output the schema says may alias an input is never a fresh buffer.
      bool aliasing = s && i < s->returns().size() && s->returns()[i].alias_info();
      if (!escapes_[v->id()] && !aliasing) plan.retained[v->id()] = 1;
    }
  }
}

void PlanBuilder::addReleases(ExecBlock& eb, const BlockLiveness& live) {
  ExecutionPlan& plan = plan_;
  for (size_t i = 0; i < eb.steps.size(); ++i) {
    const std::vector<uint32_t>& release = live.releasedAfter(i);
    eb.steps[i].release_begin = static_cast<uint32_t>(plan.indices.size());
    eb.steps[i].num_release = static_cast<uint32_t>(release.size());
    plan.indices.insert(plan.indices.end(), release.begin(), release.end());
  }
}

}  // namespace brisk
