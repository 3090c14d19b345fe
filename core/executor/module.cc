#include "core/executor/module.h"

#include <glog/logging.h>

#include <ATen/core/ivalue_inl.h>

#include "core/common/error.h"
#include "core/common/file_check.h"
#include "core/common/option_ranges.h"
#include "core/executor/plan_builder.h"
#include "core/executor/runtime.h"
#include "core/frontend/pt2/pt2.h"
#include "core/frontend/torchscript.h"
#include "core/graph/graph.h"
#include "core/graph/inplace_reuse.h"
#include "core/kernels/kernel_registry.h"
#include "core/kernels/plugin_loader.h"
#include "threading/thread_settings.h"

namespace brisk {

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
  // By content: a PT2 archive is a zip like a TorchScript one, and either may have any name.
  FrontendResult r = isPt2Archive(path) ? loadPt2(path, options) : loadTorchScript(path, options);
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
