#include "core/executor/module.h"

#include <glog/logging.h>

#include <algorithm>

#include <ATen/core/ivalue_inl.h>

#include "core/common/error.h"
#include "core/common/file_check.h"
#include "core/common/option_ranges.h"
#include "core/executor/plan_builder.h"
#include "core/executor/runtime.h"
#include "core/frontend/frontend.h"
#include "core/frontend/torchscript/torchscript.h"  // parseTorchScriptIR
#include "core/graph/graph.h"
#include "core/graph/inplace_reuse.h"  // runsInPlace
#include "core/kernels/kernel_registry.h"
#include "core/kernels/plugin_loader.h"
#include "core/kernels/releasable_constants.h"
#include "threading/thread_settings.h"

namespace brisk {

void Module::publishMemoryStats(const MemoryStats& s) const {
  std::lock_guard<std::mutex> lock(memory_mu_);
  memory_stats_ = s;
}

// What a handle needs to build a generation: the file, the options, the registries,
// and the replacements in force (already checked and copied).
struct Module::Source {
  std::string path;  // absolute: a later chdir must not change which file a swap reads
  FileStamp stamp;   // the file as loaded
  Options options;
  Registries* registries;
  std::vector<WeightInfo> weights;
  WeightMap replaced;
  std::string requested_program;  // the caller's pt2_program: other files are read with it
  std::atomic<uint64_t> version{0};
  std::mutex swap_mu;  // one swap at a time; runs never take it

  // `named` (the first build only: later ones must not write what weights() reads
  // concurrently) receives the file's named weights.
  std::shared_ptr<Module> build(const WeightMap& replacements, std::vector<WeightInfo>* named = nullptr) {
    if (std::string problem = fileProblem(path); !problem.empty())
      throw Error(Error::Where{path, "", ""}, "cannot read the model file: it " + problem);
    checkUnchanged();
    FrontendResult r = loadModel(path, options, replacements);
    checkUnchanged();  // rewritten while it was read
    if (named) *named = r.weights;
    return fromFrontend(std::move(r), options, registries);
  }

  // A generation is rebuilt from the file: one replaced or rewritten since load would
  // bring in another model's weights, or another forward.
  void checkUnchanged() const {
    if (fileStamp(path) != stamp)
      throw Error(Error::Where{path, "", ""},
                  "the model file changed since it was loaded (a weight swap rebuilds the model from it); "
                  "load the new file as a new Module");
  }
};

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

// A NativeRT archive whose regions AOTInductor compiled runs them by default, when
// delegates are on and the aoti backend can be had: its delegate program is chosen and
// "aoti" joins the backend list (the backend claims each call into a region,
// delegates/aoti/README.md). Otherwise, or when pt2_program names a program, the
// archive's original program runs on brisk's kernels, as any PT2 archive does.
Options withDelegateProgram(const std::string& path, Options o, const Registries& registries) {
  // Not a regular file (a FIFO would block the open): the load reports it.
  if (!o.pt2_program.empty() || !o.use_delegates || !fileProblem(path).empty()) return o;
  std::string program;
  try {
    program = compiledRegionsProgram(path);
  } catch (const Error&) {
    return o;  // an unreadable archive: the load itself reports it, as for any archive
  }
  if (program.empty()) return o;
  if (std::find(o.delegates.begin(), o.delegates.end(), "aoti") == o.delegates.end()) {
    if (!registries.delegates.find("aoti") && findPlugin("aoti", o.plugin_path).empty()) {
      LOG_FIRST_N(WARNING, 1) << "brisk: " << path << ": the archive's program '" << program
                              << "' runs regions compiled by AOTInductor, but the aoti delegate plugin "
                                 "(libbrisk_aoti.so) is not found; its original program runs on brisk's kernels";
      return o;
    }
    o.delegates.push_back("aoti");
  }
  o.pt2_program = program;
  return o;
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

std::shared_ptr<Module> Module::fromFrontend(FrontendResult r, const Options& options, Registries* registries) {
  Registries& regs = registries ? *registries : Registries::global();
  const std::string name = r.graph->name();
  loadPlugins(name, options, regs);  // their passes run too
  // Before the passes: a delegate backend reads its options while claiming nodes.
  regs.plugin_options.validate(options, name);
  regs.passes.checkDisabled(options, name);
  std::vector<PassResult> passes = regs.passes.run(*r.graph, PassContext{name, options});
  r.graph->finalize();
  markReleasableConstants(*r.graph);  // after every pass: no later edit adds a reader
  std::shared_ptr<Module> m = fromGraph(std::move(r.graph), std::move(r.signature), options, &regs, std::move(r.keepalive));
  m->passes_ = std::move(passes);
  return m;
}

std::shared_ptr<Module> Module::load(const std::string& path, const Options& options, Registries* registries) {
  validateOptions(options, path);  // before the costly load
  auto source = std::make_unique<Source>();
  source->path = absolutePath(path);
  source->stamp = fileStamp(source->path);
  source->registries = registries;
  source->requested_program = options.pt2_program;
  source->options = withDelegateProgram(source->path, options, registries ? *registries : Registries::global());
  std::shared_ptr<Module> first = source->build({}, &source->weights);
  // The options in force: the program and backends a NativeRT archive chose.
  std::shared_ptr<Module> handle(new Module(first->name_, source->options));
  handle->source_ = std::move(source);
  handle->current_.store(std::move(first));
  return handle;
}

std::shared_ptr<const Module> Module::generation() const {
  return source_ ? current_.load() : shared_from_this();
}

const std::vector<WeightInfo>& Module::weights() const {
  static const std::vector<WeightInfo> none;
  return source_ ? source_->weights : none;
}

uint64_t Module::weightsVersion() const { return source_ ? source_->version.load() : 0; }

void Module::swapWeights(const WeightMap& replacements) {
  if (!source_)
    throw Error(Error::Where{name_, "", ""},
                "swapWeights needs a Module loaded from a model file (this one was built from IR or a graph)");
  std::lock_guard<std::mutex> lock(source_->swap_mu);
  checkReplacements(source_->weights, replacements, name_);
  WeightMap next = source_->replaced;
  for (auto& [name, t] : copyWeights(replacements)) next[name] = std::move(t);
  std::vector<WeightInfo> named;
  std::shared_ptr<const Module> built = source_->build(next, &named);  // throws: nothing changed
  // The next generation is rebuilt from the file: one rewritten since load is another model.
  if (named != source_->weights)
    throw Error(Error::Where{name_, "", ""}, "cannot swap weights: the model file changed since it was loaded");
  source_->replaced = std::move(next);
  current_.store(std::move(built));
  source_->version.fetch_add(1);
}

void Module::swapWeightsFrom(const std::string& path) {
  // Errors name this model (the one whose weights would change) and the weights file.
  const Error::Where where{name_, "", ""};
  if (std::string problem = fileProblem(path); !problem.empty())
    throw Error(where, "cannot read the weights file " + path + ": it " + problem);
  WeightMap other;
  try {
    // With the caller's program choice: the one a NativeRT archive made is its own name.
    Options read = options_;
    if (source_) read.pt2_program = source_->requested_program;
    other = readModelWeights(path, read);
  } catch (const Error& e) {
    throw Error(where, "cannot swap weights from " + path + ": " + e.message());
  }
  // "Another file of the same model": a file whose few weights happen to share names and
  // shapes with some of ours is another model, not a checkpoint of this one.
  if (source_) {
    checkReplacements(source_->weights, other, name_);  // every one of its weights is one of ours
    for (const WeightInfo& w : source_->weights)
      if (!other.count(w.name))
        throw Error(Error::Where{name_, "", ""}, "cannot swap weights from " + path +
                                                     ": it is not a file of this model (no weight '" + w.name + "'; it has " +
                                                     std::to_string(other.size()) + " weights, the model " +
                                                     std::to_string(source_->weights.size()) + ")");
  }
  swapWeights(other);
}

std::shared_ptr<Module> Module::fromIR(const std::string& ir, const Options& options, const std::string& name,
                                       Registries* registries) {
  validateOptions(options, name);
  return fromFrontend(parseTorchScriptIR(ir, name), options, registries);
}

RuntimePool::Lease Module::lease() const {
  try {
    return pool_->borrow();
  } catch (const Error& e) {
    throw e.withModel(name_);
  }
}

c10::IValue Module::run(std::vector<c10::IValue> args, const Kwargs& kwargs) const {
  if (source_) return current_.load()->run(std::move(args), kwargs);  // the load keeps it alive
  RuntimePool::Lease rt = lease();
  return rt->run(std::move(args), kwargs);
}

c10::IValue Module::run(std::vector<c10::IValue> args, const Kwargs& kwargs, const RunOptions& options) const {
  if (source_) return current_.load()->run(std::move(args), kwargs, options);
  RuntimePool::Lease rt = lease();
  return rt->run(std::move(args), kwargs, options);
}

c10::intrusive_ptr<c10::ivalue::Future> Module::runAsync(std::vector<c10::IValue> args, const Kwargs& kwargs,
                                                         TaskLauncher launcher) const {
  if (source_) return current_.load()->runAsync(std::move(args), kwargs, std::move(launcher));
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
  std::shared_ptr<const Module> g = generation();
  const Module& m = *g;
  return std::make_unique<Runtime>(m, std::move(g));
}

std::vector<NodeKernelInfo> Module::kernelReport() const {
  if (source_) return current_.load()->kernelReport();
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
                                   ok ? ok->provider() : "", "runs as part of its partition", depth, false});
      continue;
    }
    out.push_back(NodeKernelInfo{n->index(), n->str(), n->key(), k->kind(), k->provider(), k->describe(), depth,
                                 runsInPlace(*n, *k)});
  }
  return out;
}

ModuleStats Module::stats() const {
  if (source_) return current_.load()->stats();
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
