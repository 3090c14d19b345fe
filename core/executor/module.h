#pragma once
// A Module is the handle a user holds on a loaded model. It serves every call from the
// model's current compiled form (CompiledModule, compiled_module.h) and, for a model
// loaded from a file, can swap its weights: swapWeights compiles the next generation and
// publishes it atomically; every call is served by the generation current when it
// starts, so a run in flight keeps the weights it started with. Shared by every thread.
#include <ATen/core/ivalue.h>
#include <c10/util/intrusive_ptr.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/common/options.h"
#include "core/executor/compiled_module.h"
#include "core/executor/run_options.h"
#include "core/frontend/weights.h"
#include "core/graph/signature.h"

namespace brisk {

class Graph;
class Runtime;
struct Registries;

class Module {
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
  // Builds a Module from an already converted Graph (tests).
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
  // A Runtime owned by the caller (keeps its generation alive). It stays on the weights
  // current at its creation: a later swapWeights does not reach it.
  std::unique_ptr<Runtime> createRuntime() const;

  // The compiled model serving calls now. Its graph, plan and signature stay valid for as
  // long as the pointer is held, whatever swapWeights does meanwhile.
  std::shared_ptr<const CompiledModule> compiled() const { return current_.load(); }

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

  const std::string& name() const { return name_; }
  // The options in force (for a NativeRT archive, with the program and backends it chose).
  const Options& options() const { return options_; }
  // Of the current generation.
  std::vector<NodeKernelInfo> kernelReport() const { return compiled()->kernelReport(); }
  std::vector<PassResult> passReport() const { return compiled()->passReport(); }
  ModuleStats stats() const { return compiled()->stats(); }

 private:
  struct Source;
  Module(std::string name, Options options, std::shared_ptr<const CompiledModule> first,
         std::unique_ptr<Source> source);

  const std::string name_;
  const Options options_;
  // Loaded from a file only: how to build a generation, and the replacements so far.
  const std::unique_ptr<Source> source_;
  std::atomic<std::shared_ptr<const CompiledModule>> current_;
};

}  // namespace brisk
