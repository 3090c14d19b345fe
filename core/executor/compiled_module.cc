#include "core/executor/compiled_module.h"

#include <glog/logging.h>

#include <ATen/core/ivalue_inl.h>

#include "core/common/error.h"
#include "core/common/option_ranges.h"
#include "core/executor/plan_builder.h"
#include "core/executor/runtime.h"
#include "core/graph/graph.h"
#include "core/graph/inplace_reuse.h"  // runsInPlace
#include "core/kernels/kernel_registry.h"
#include "core/kernels/plugin_loader.h"
#include "core/kernels/releasable_constants.h"
#include "threading/thread_settings.h"

namespace brisk {

namespace {

void loadPlugins(const std::string& model, const Options& o, Registries& registries) {
  for (const std::string& p : o.plugins) {
    try {
      loadPlugin(p, o.plugin_path, registries);
    } catch (const Error& e) {
      const bool missing_default = o.default_plugins_optional && p == kDefaultPlugin &&
                                   findPlugin(p, o.plugin_path).empty();
      if (!missing_default) throw e.withModel(model);
      LOG_FIRST_N(WARNING, 1) << "brisk: default plugin '" << p
                              << "' not found; nodes will use fallback kernels (" << e.what() << ")";
    }
  }
  // Reduced precision comes from its own plugin, loaded only when asked for.
  if (!o.precision.empty() && !registries.passes.find("ops_quantized.reduce_precision")) {
    try {
      loadPlugin("ops_quantized", o.plugin_path, registries);
    } catch (const Error& e) {
      throw e.withModel(model);
    }
  }
  if (!o.use_delegates) return;
  // A backend no loaded plugin registers comes from the plugin of the same name.
  const bool defaults = o.default_plugins_optional && o.delegates == Options{}.delegates;
  for (const std::string& name : o.delegates) {
    if (registries.delegates.find(name)) continue;
    try {
      loadPlugin(name, o.plugin_path, registries);
    } catch (const Error& e) {
      if (!defaults || !findPlugin(name, o.plugin_path).empty()) throw e.withModel(model);
      LOG_FIRST_N(WARNING, 1) << "brisk: default delegate backend '" << name
                              << "' not found; its nodes run on brisk's own kernels (" << e.what() << ")";
      continue;
    }
    if (!registries.delegates.find(name)) {
      std::string known;
      for (const std::string& n : registries.delegates.names()) known += (known.empty() ? "" : ", ") + n;
      throw Error(Error::Where{model, "", ""}, "delegate backend '" + name + "': plugin '" + name +
                                                   "' loaded but registers no backend of that name (registered: " +
                                                   (known.empty() ? "none" : known) + ")");
    }
  }
}

c10::TypePtr outputType(const Graph& g) {
  std::vector<c10::TypePtr> outs;
  for (const Value* r : g.top()->returns()) outs.push_back(r->type());
  return outs.size() == 1 ? outs[0] : c10::TupleType::create(std::move(outs));
}

}  // namespace

CompiledModule::CompiledModule(std::shared_ptr<const Graph> graph, Signature signature, Options options,
                               std::shared_ptr<void> keepalive, std::vector<PassResult> passes)
    : name_(graph->name()),
      options_(std::move(options)),
      graph_(std::move(graph)),
      keepalive_(std::move(keepalive)),
      signature_(std::move(signature)),
      passes_(std::move(passes)),
      learned_inputs_(signature_),
      output_type_(outputType(*graph_)) {}

CompiledModule::~CompiledModule() = default;

std::shared_ptr<const CompiledModule> CompiledModule::build(std::shared_ptr<const Graph> graph, Signature signature,
                                                            const Options& options, Registries* registries,
                                                            std::shared_ptr<void> keepalive,
                                                            std::vector<PassResult> passes) {
  Registries& regs = registries ? *registries : Registries::global();
  validateOptions(options, graph->name());
  try {
    threading::applyThreadSettings(threading::ThreadSettings{options.intra_op_threads, options.inter_op_threads});
  } catch (const std::invalid_argument& e) {
    throw Error(Error::Where{graph->name(), "", ""}, e.what());
  }
  std::shared_ptr<CompiledModule> m(
      new CompiledModule(std::move(graph), std::move(signature), options, std::move(keepalive), std::move(passes)));
  loadPlugins(m->name_, options, regs);
  regs.plugin_options.validate(options, m->name_);  // needs the plugins' declarations
  PlanBuilder builder(m->graph_, m->options_, m->keepalive_, regs, m->plan_);
  m->children_ = builder.build();
  // The pool's runtimes point at their module; the module owns the pool, so a raw
  // pointer cannot dangle (and a shared one would be a cycle).
  const CompiledModule* raw = m.get();
  m->pool_ = std::make_unique<RuntimePool>([raw] { return std::make_unique<Runtime>(*raw, nullptr); },
                                           options.max_runtimes, options.runtime_idle_ms);
  return m;
}

std::shared_ptr<const CompiledModule> CompiledModule::fromFrontend(FrontendResult r, const Options& options,
                                                                   Registries* registries) {
  Registries& regs = registries ? *registries : Registries::global();
  const std::string name = r.graph->name();
  loadPlugins(name, options, regs);  // their passes run too
  // Before the passes: a delegate backend reads its options while claiming nodes.
  regs.plugin_options.validate(options, name);
  regs.passes.checkDisabled(options, name);
  std::vector<PassResult> passes = regs.passes.run(*r.graph, PassContext{name, options});
  r.graph->finalize();
  markReleasableConstants(*r.graph);  // after every pass: no later edit adds a reader
  return build(std::move(r.graph), std::move(r.signature), options, &regs, std::move(r.keepalive),
               std::move(passes));
}

RuntimePool::Lease CompiledModule::lease() const {
  try {
    return pool_->borrow();
  } catch (const Error& e) {
    throw e.withModel(name_);
  }
}

c10::IValue CompiledModule::run(std::vector<c10::IValue> args, const Kwargs& kwargs,
                                const RunOptions& options) const {
  RuntimePool::Lease rt = lease();
  return rt->run(std::move(args), kwargs, options);
}

c10::intrusive_ptr<c10::ivalue::Future> CompiledModule::runAsync(std::vector<c10::IValue> args,
                                                                 const Kwargs& kwargs,
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

std::unique_ptr<Runtime> CompiledModule::createRuntime() const {
  return std::make_unique<Runtime>(*this, shared_from_this());
}

void CompiledModule::publishMemoryStats(const MemoryStats& s) const {
  std::lock_guard<std::mutex> lock(memory_mu_);
  memory_stats_ = s;
}

std::vector<NodeKernelInfo> CompiledModule::kernelReport() const {
  std::vector<const Kernel*> by_node(graph_->numNodes(), nullptr);
  for (const ExecBlock& b : plan_.blocks)
    for (const Step& s : b.steps) by_node[s.node->index()] = s.kernel;
  std::vector<NodeKernelInfo> out;
  for (const Node* n : graph_->allNodes()) {
    int depth = 0;
    for (const Block* b = n->owningBlock(); b->owningNode(); b = b->owningNode()->owningBlock()) ++depth;
    const Kernel* k = by_node[n->index()];
    if (!k) {  // inside a partition compiled as a whole, with no nested plan (a compiled region)
      const Node* outer = n->owningBlock()->owningNode();
      while (outer && !by_node[outer->index()]) outer = outer->owningBlock()->owningNode();
      const Kernel* ok = outer ? by_node[outer->index()] : nullptr;
      out.push_back(NodeKernelInfo{n->index(), n->str(), n->key(), ok ? ok->kind() : KernelKind::kDelegate,
                                   ok ? ok->outputs() : OutputContract::kFresh, ok ? ok->provider() : "",
                                   "runs as part of its partition", depth, false});
      continue;
    }
    out.push_back(NodeKernelInfo{n->index(), n->str(), n->key(), k->kind(), k->outputs(), k->provider(),
                                 k->describe(), depth, runsInPlace(*n, *k)});
  }
  return out;
}

ModuleStats CompiledModule::stats() const {
  ModuleStats s;
  s.nodes = graph_->numNodes();
  s.folded_nodes = graph_->foldedNodes();
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
