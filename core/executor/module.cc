#include "core/executor/module.h"

#include <glog/logging.h>

#include <algorithm>

#include "core/common/error.h"
#include "core/common/file_check.h"
#include "core/common/option_ranges.h"
#include "core/executor/runtime.h"
#include "core/frontend/frontend.h"
#include "core/frontend/torchscript/torchscript.h"  // parseTorchScriptIR
#include "core/kernels/kernel_registry.h"
#include "core/kernels/plugin_loader.h"

namespace brisk {

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
  std::shared_ptr<const CompiledModule> build(const WeightMap& replacements,
                                              std::vector<WeightInfo>* named = nullptr) {
    if (std::string problem = fileProblem(path); !problem.empty())
      throw Error(Error::Where{path, "", ""}, "cannot read the model file: it " + problem);
    checkUnchanged();
    FrontendResult r = loadModel(path, options, replacements);
    checkUnchanged();  // rewritten while it was read
    if (named) *named = r.weights;
    return CompiledModule::fromFrontend(std::move(r), options, registries);
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

Module::Module(std::string name, Options options, std::shared_ptr<const CompiledModule> first,
               std::unique_ptr<Source> source)
    : name_(std::move(name)), options_(std::move(options)), source_(std::move(source)), current_(std::move(first)) {}
Module::~Module() = default;

namespace {

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
  std::shared_ptr<const CompiledModule> c =
      CompiledModule::build(std::move(graph), std::move(signature), options, registries, std::move(keepalive));
  return std::shared_ptr<Module>(new Module(c->name(), options, c, nullptr));
}

std::shared_ptr<Module> Module::load(const std::string& path, const Options& options, Registries* registries) {
  validateOptions(options, path);  // before the costly load
  auto source = std::make_unique<Source>();
  source->path = absolutePath(path);
  source->stamp = fileStamp(source->path);
  source->registries = registries;
  source->requested_program = options.pt2_program;
  source->options = withDelegateProgram(source->path, options, registries ? *registries : Registries::global());
  std::shared_ptr<const CompiledModule> first = source->build({}, &source->weights);
  // The options in force: the program and backends a NativeRT archive chose.
  const std::string name = first->name();
  Options in_force = source->options;
  return std::shared_ptr<Module>(new Module(name, std::move(in_force), std::move(first), std::move(source)));
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
  std::shared_ptr<const CompiledModule> built = source_->build(next, &named);  // throws: nothing changed
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
  std::shared_ptr<const CompiledModule> c =
      CompiledModule::fromFrontend(parseTorchScriptIR(ir, name), options, registries);
  return std::shared_ptr<Module>(new Module(c->name(), options, c, nullptr));
}

c10::IValue Module::run(std::vector<c10::IValue> args, const Kwargs& kwargs) const {
  return current_.load()->run(std::move(args), kwargs);  // the load keeps the generation alive
}

c10::IValue Module::run(std::vector<c10::IValue> args, const Kwargs& kwargs, const RunOptions& options) const {
  return current_.load()->run(std::move(args), kwargs, options);
}

c10::intrusive_ptr<c10::ivalue::Future> Module::runAsync(std::vector<c10::IValue> args, const Kwargs& kwargs,
                                                         TaskLauncher launcher) const {
  return current_.load()->runAsync(std::move(args), kwargs, std::move(launcher));
}

std::unique_ptr<Runtime> Module::createRuntime() const { return current_.load()->createRuntime(); }

}  // namespace brisk
