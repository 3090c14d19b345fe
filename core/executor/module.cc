#include "core/executor/module.h"

#include <glog/logging.h>

#include <algorithm>

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue_inl.h>

#include "core/common/error.h"
#include "core/graph/escape_analysis.h"
#include "core/kernels/fallback_kernel.h"
#include "core/common/file_check.h"
#include "core/frontend/frontend.h"
#include "core/graph/graph.h"
#include "core/common/option_ranges.h"
#include "core/graph/inplace_reuse.h"
#include "core/kernels/kernel_registry.h"
#include "core/memory/memory_plan.h"
#include "core/executor/parallel_plan.h"
#include "core/kernels/plugin_loader.h"
#include "core/executor/runtime.h"
#include "planners/registry.h"
#include "threading/thread_settings.h"

namespace brisk {

// Builds a Module's execution plan: chooses every node's kernel, compiles blocks into
// flat step arrays, decides which outputs are reused across runs and where each value
// dies. Load-time only.
class ModuleBuilder {
 public:
  ModuleBuilder(Module& m, Registries& registries) : m_(m), registries_(registries) {}

  void build() {
    choosePlanner();
    escapes_ = findEscapingValues(*m_.graph_);
    kernel_of_node_.assign(m_.graph_->numNodes(), nullptr);
    compileBlock(*m_.graph_->top());
    decideRetention();
    for (ExecBlock& b : m_.plan_.blocks) addReleases(b);
    ExecutionPlan& plan = m_.plan_;
    if (m_.options_.memory_planning)
      for (ExecBlock& b : plan.blocks) planManagedValues(*m_.graph_, plan.retained, b);
    // Only the top block runs in parallel: If/Loop bodies run inside one step.
    if (m_.options_.max_parallel_ops > 1) planParallelBlock(*m_.graph_, plan.retained, plan.blocks.front());
    plan.num_slots = m_.graph_->numValues();
    for (const Value* c : m_.graph_->constants()) plan.constants.emplace_back(c->id(), c->constant());
    for (uint32_t id = 0; id < plan.num_slots; ++id)
      if (!m_.graph_->value(id)->isConstant() && !plan.retained[id]) plan.cleanup.push_back(id);
  }

  const ExecBlock* compileBlock(const Block& block);
  std::shared_ptr<Module> buildChild(const Graph& subgraph);
  const std::vector<const Kernel*>& kernelOfNode() const { return kernel_of_node_; }

 private:
  std::unique_ptr<Kernel> chooseKernel(const Node& node);
  void choosePlanner();
  void decideRetention();
  void addReleases(ExecBlock& eb);
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

namespace {

class BuildContext final : public KernelBuildContext {
 public:
  BuildContext(ModuleBuilder& b, const Module& m, const Node& n) : b_(b), m_(m), n_(n) {}
  const Node& node() const override { return n_; }
  const Options& options() const override { return m_.options(); }
  const std::string& modelName() const override { return m_.name(); }
  const ExecBlock* compileBlock(const Block& block) override { return b_.compileBlock(block); }
  std::shared_ptr<Module> buildChild(const Graph& subgraph) override { return b_.buildChild(subgraph); }

 private:
  ModuleBuilder& b_;
  const Module& m_;
  const Node& n_;
};

// A node whose kernel may write its result into a free input (core/graph/inplace_reuse.h):
// annotated, and served by a plugin kernel (a fallback runs the functional op).
bool runsInPlace(const Node& n, const Kernel& k) {
  return n.reusableInput() >= 0 && k.kind() == KernelKind::kNative;
}

// Ops whose kernels the executor itself depends on; never sent to the fallback.
bool isStructural(const Node& n) {
  return n.kind() == "prim::If" || n.kind() == "prim::Loop" || n.kind() == "prim::fork" ||
         n.kind() == "aten::wait";
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

std::unique_ptr<Kernel> ModuleBuilder::chooseKernel(const Node& node) {
  const Options& o = m_.options_;
  BuildContext ctx(*this, m_, node);
  const Error::Where where{m_.name_, node.describe(), node.key()};
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
    throw e.withModel(m_.name_).withNode(node.describe(), node.key());
  } catch (const std::exception& e) {
    throw Error(where, "building its kernel failed: " + describeException(e));
  }
  throw Error(where, "no kernel and no fallback can run this op (node: " + node.str() + ")");
}

const ExecBlock* ModuleBuilder::compileBlock(const Block& block) {
  ExecutionPlan& plan = m_.plan_;
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

std::shared_ptr<Module> ModuleBuilder::buildChild(const Graph& subgraph) {
  std::vector<Argument> args;
  for (const Value* v : subgraph.inputs())
    args.push_back(Argument{v->name().empty() ? v->ref() : v->name(), v->type(), std::nullopt});
  // The child shares ownership of the parent's graph (which owns the subgraph) and of
  // the JIT graph its fallback Operations came from.
  std::shared_ptr<const Graph> g(m_.graph_, &subgraph);
  Options child_options = m_.options_;
  child_options.strict_inputs = false;  // the parent checked the model's inputs
  // A capped child pool could block arena workers in borrow() while the runtimes they
  // wait for belong to tasks waiting on forks that need those workers: only the top
  // Module's callers are capped.
  child_options.max_runtimes = 0;
  auto child = Module::fromGraph(g, Signature(subgraph.name(), std::move(args)), child_options,
                                 &registries_, m_.keepalive_);
  m_.children_.push_back(child);
  return child;
}

void ModuleBuilder::choosePlanner() {
  const std::string& name = m_.options_.planner;
  const auto& registry = planners::PlannerRegistry::global();
  m_.plan_.layout = registry.lookup(name);
  if (m_.plan_.layout) return;
  std::string valid;
  for (const std::string& n : registry.names()) valid += (valid.empty() ? "" : ", ") + n;
  throw Error(Error::Where{m_.name_, "", ""}, "unknown memory planner '" + name + "' (valid: " + valid + ")");
}

void ModuleBuilder::decideRetention() {
  ExecutionPlan& plan = m_.plan_;
  plan.retained.assign(m_.graph_->numValues(), 0);
  for (const Node* n : m_.graph_->allNodes()) {
    const Kernel* k = kernel_of_node_[n->index()];
    if (!k || k->kind() != KernelKind::kOutVariant) continue;
    const c10::FunctionSchema* s = n->schema();
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const Value* v = n->output(i);
      // An output the schema says may alias an input is never a fresh buffer.
      bool aliasing = s && i < s->returns().size() && s->returns()[i].alias_info();
      if (!escapes_[v->id()] && !aliasing) plan.retained[v->id()] = 1;
    }
  }
}

void ModuleBuilder::addReleases(ExecBlock& eb) {
  // Release a value right after the step that last reads it, if it was defined in this
  // block and nothing later needs it: not constants, not retained outputs (reused next
  // run) and not this block's results (its consumer reads them after the block ends).
  const Block& block = *eb.source;
  ExecutionPlan& plan = m_.plan_;
  std::unordered_map<uint32_t, size_t> last_use;
  std::vector<const Value*> reads;
  for (size_t i = 0; i < block.nodes().size(); ++i) {
    reads.clear();
    collectReads(block.nodes()[i], reads);
    for (const Value* v : reads)
      if (v->owningBlock() == &block) last_use[v->id()] = i;
    for (const Value* out : block.nodes()[i]->outputs())
      if (!last_use.count(out->id())) last_use[out->id()] = i;  // unused: dies at once
  }
  for (const Value* r : block.returns()) last_use.erase(r->id());
  std::vector<std::vector<uint32_t>> release(block.nodes().size());
  for (const auto& [id, step] : last_use)
    if (!plan.retained[id] && !m_.graph_->value(id)->isConstant()) release[step].push_back(id);
  for (size_t i = 0; i < eb.steps.size(); ++i) {
    std::sort(release[i].begin(), release[i].end());
    eb.steps[i].release_begin = static_cast<uint32_t>(plan.indices.size());
    eb.steps[i].num_release = static_cast<uint32_t>(release[i].size());
    plan.indices.insert(plan.indices.end(), release[i].begin(), release[i].end());
  }
}

// --- Module ----------------------------------------------------------------------

void Module::publishMemoryStats(const MemoryStats& s) const {
  std::lock_guard<std::mutex> lock(memory_mu_);
  memory_stats_ = s;
}

Module::Module(std::string name, Options options) : name_(std::move(name)), options_(std::move(options)) {}
Module::~Module() = default;

namespace {

void loadPlugins(const std::string& model, const Options& o, Registries& registries) {
  for (const std::string& p : o.plugins) {
    try {
      loadPlugin(p, o.plugin_path, registries);
    } catch (const Error& e) {
      const bool missing_default = o.default_plugins_optional && p == "ops_cpu" &&
                                   findPlugin(p, o.plugin_path).empty();
      if (!missing_default) throw e.withModel(model);
      LOG_FIRST_N(WARNING, 1) << "brisk: default plugin '" << p
                              << "' not found; nodes will use fallback kernels (" << e.what() << ")";
    }
  }
}

}  // namespace

std::shared_ptr<Module> Module::fromGraph(std::shared_ptr<const Graph> graph, Signature signature,
                                          const Options& options, Registries* registries,
                                          std::shared_ptr<void> keepalive) {
  Registries& regs = registries ? *registries : Registries::global();
  validateOptions(options, graph->name());
  try {
    threading::applyThreadSettings(threading::ThreadSettings{options.intra_op_threads, options.inter_op_threads});
  } catch (const std::invalid_argument& e) {
    throw Error(Error::Where{graph->name(), "", ""}, e.what());
  }
  std::shared_ptr<Module> m(new Module(graph->name(), options));
  m->graph_ = std::move(graph);
  m->keepalive_ = std::move(keepalive);
  m->signature_ = std::move(signature);
  loadPlugins(m->name_, options, regs);
  regs.plugin_options.validate(options, m->name_);  // needs the plugins' declarations
  ModuleBuilder builder(*m, regs);
  builder.build();
  std::vector<c10::TypePtr> outs;
  for (const Value* r : m->graph_->top()->returns()) outs.push_back(r->type());
  m->output_type_ = outs.size() == 1 ? outs[0] : c10::TupleType::create(std::move(outs));
  Module* raw = m.get();
  m->pool_ = std::make_unique<RuntimePool>([raw] { return std::make_unique<Runtime>(*raw, nullptr); },
                                           options.max_runtimes, options.runtime_idle_ms);
  return m;
}

std::shared_ptr<Module> Module::load(const std::string& path, const Options& options, Registries* registries) {
  validateOptions(options, path);  // before the costly load
  if (std::string problem = fileProblem(path); !problem.empty())
    throw Error(Error::Where{path, "", ""}, "cannot read the model file: it " + problem);
  FrontendResult r = loadTorchScript(path, options);
  if (options.inplace_reuse) markInPlaceReuse(*r.graph);
  return fromGraph(std::move(r.graph), std::move(r.signature), options, registries, std::move(r.keepalive));
}

std::shared_ptr<Module> Module::fromIR(const std::string& ir, const Options& options, const std::string& name,
                                       Registries* registries) {
  FrontendResult r = parseTorchScriptIR(ir, name);
  if (options.inplace_reuse) markInPlaceReuse(*r.graph);
  return fromGraph(std::move(r.graph), std::move(r.signature), options, registries, std::move(r.keepalive));
}

c10::IValue Module::run(std::vector<c10::IValue> args, const Kwargs& kwargs) const {
  RuntimePool::Lease rt = pool_->borrow();
  return rt->run(std::move(args), kwargs);
}

c10::IValue Module::run(std::vector<c10::IValue> args, const Kwargs& kwargs, const RunOptions& options) const {
  RuntimePool::Lease rt = pool_->borrow();
  return rt->run(std::move(args), kwargs, options);
}

c10::intrusive_ptr<c10::ivalue::Future> Module::runAsync(std::vector<c10::IValue> args, const Kwargs& kwargs,
                                                         TaskLauncher launcher) const {
  auto future = c10::make_intrusive<c10::ivalue::Future>(output_type_);
  RunOptions options;
  options.launcher = std::move(launcher);
  try {
    future->markCompleted(run(std::move(args), kwargs, options));
  } catch (...) {
    future->setError(std::current_exception());
  }
  return future;
}

std::unique_ptr<Runtime> Module::createRuntime() const {
  return std::make_unique<Runtime>(*this, shared_from_this());
}

std::vector<NodeKernelInfo> Module::kernelReport() const {
  std::vector<const Kernel*> by_node(graph_->numNodes(), nullptr);
  for (const ExecBlock& b : plan_.blocks)
    for (const Step& s : b.steps) by_node[s.node->index()] = s.kernel;
  std::vector<NodeKernelInfo> out;
  for (const Node* n : graph_->allNodes()) {
    int depth = 0;
    for (const Block* b = n->owningBlock(); b->owningNode(); b = b->owningNode()->owningBlock()) ++depth;
    const Kernel* k = by_node[n->index()];
    out.push_back(NodeKernelInfo{n->index(), n->str(), n->key(), k->kind(), k->provider(), k->describe(), depth,
                                 runsInPlace(*n, *k)});
  }
  return out;
}

ModuleStats Module::stats() const {
  ModuleStats s;
  s.nodes = graph_->numNodes();
  for (const ExecBlock& b : plan_.blocks)
    for (const Step& st : b.steps) {
      ++s.kernels_by_kind[static_cast<int>(st.kernel->kind())];
      if (runsInPlace(*st.node, *st.kernel)) ++s.inplace_nodes;
    }
  for (uint8_t r : plan_.retained) s.retained_values += r;
  for (const ExecBlock& b : plan_.blocks) s.managed_values += b.managed.size();
  {
    std::lock_guard<std::mutex> lock(memory_mu_);
    s.memory = memory_stats_;
  }
  s.pool = pool_->stats();
  return s;
}

}  // namespace brisk
