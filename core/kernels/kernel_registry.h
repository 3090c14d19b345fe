#pragma once
// Registries that map a node's op key ("aten::add.Tensor") to kernel factories.
//
// A node's kernel is chosen once at load, in the order of docs/architecture.md:
// out-variant, native, then the TorchScript operator as fallback. Inside one
// registry, candidates for a key are tried newest-registration first, so a plugin can
// override a kernel registered earlier; a factory returns null to decline a node
// (e.g. an argument combination it does not implement) and the search goes on.
// Keys match exact overloads only: "aten::add.Tensor" never serves "aten::add.Scalar".
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/graph/graph_pass.h"
#include "core/kernels/delegate.h"
#include "core/kernels/kernel.h"
#include "core/kernels/plugin_options.h"

namespace brisk {

class Node;
class Block;
class BlockRunner;
struct Options;

// What a factory may ask at load time.
class KernelBuildContext {
 public:
  virtual ~KernelBuildContext() = default;
  virtual const Node& node() const = 0;
  virtual const Options& options() const = 0;
  // The model's name, for messages.
  virtual const std::string& modelName() const = 0;
  // Compiles one of this node's nested blocks into the module's execution plan and
  // returns what runs it (core/kernels/block_runner.h). The kernel keeps the pointer:
  // it lives as long as the Module.
  virtual const BlockRunner* compileBlock(const Block& block) = 0;
  // Reserves one slot of per-Runtime state for this kernel (Runtime::kernelState).
  virtual uint32_t reserveKernelState() = 0;

  // The value of the plugin's option `opt` (PluginRegistrar::option) for this Module.
  template <typename T>
  T pluginOption(const PluginOption<T>& opt) const {
    return opt.get(options());
  }

  // Convenience for factories specializing on constant arguments.
  bool inputIsConstant(size_t i) const;
  const c10::IValue& constantInput(size_t i) const;  // throws if not constant
};

using KernelFactory = std::function<std::unique_ptr<Kernel>(KernelBuildContext&)>;

class KernelRegistry {
 public:
  struct Entry {
    KernelFactory factory;
    std::string provider;
  };

  void add(std::string key, KernelFactory factory, std::string provider);
  // Candidates for `key`, newest first; empty when none. Load-time only.
  std::vector<Entry> lookup(std::string_view key) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::vector<Entry>> entries_;
};

// The registries a Module's kernels come from. Plugins only add to them.
struct Registries {
  Registries();
  ~Registries();
  KernelRegistry out_variant;
  KernelRegistry native;
  // What the registered plugins declare (PluginRegistrar::option).
  PluginOptionRegistry plugin_options;
  // Load-time graph passes: core's own (builtin_passes.h) and the plugins'
  // (PluginRegistrar::pass).
  PassRegistry passes;
  // Delegate backends (core/kernels/delegate.h), by name.
  DelegateRegistry delegates;
  // Unique per instance for the whole process (addresses can be reused).
  const uint64_t id;

  // The process-wide registries. Every instance starts with core's own kernels
  // (core_kernel_sets.h).
  static Registries& global();
};

}  // namespace brisk
