#include "core/kernels/kernel_registry.h"

#include <atomic>

#include "core/common/error.h"
#include "core/graph/builtin_passes.h"
#include "core/graph/graph.h"
#include "core/kernels/core_kernel_sets.h"
#include "core/kernels/partitioner.h"
#include "core/kernels/plugin.h"

namespace brisk {

const char* kernelKindName(KernelKind kind) {
  switch (kind) {
    case KernelKind::kOutVariant: return "out-variant";
    case KernelKind::kNative: return "native";
    case KernelKind::kDelegate: return "delegate";
    case KernelKind::kFallback: return "fallback";
  }
  return "?";
}

const char* outputContractName(OutputContract contract) {
  switch (contract) {
    case OutputContract::kReused: return "reused";
    case OutputContract::kCaptured: return "captured";
    case OutputContract::kFresh: return "fresh";
    case OutputContract::kIntoInput: return "into-input";
  }
  return "?";
}

bool KernelBuildContext::inputIsConstant(size_t i) const {
  return i < node().inputs().size() && node().input(i)->isConstant();
}

const c10::IValue& KernelBuildContext::constantInput(size_t i) const {
  if (!inputIsConstant(i))
    throw Error(Error::Where{modelName(), node().describe(), node().key()},
                "input " + std::to_string(i) + " is not a constant");
  return node().input(i)->constant();
}

void KernelRegistry::add(std::string key, KernelFactory factory, std::string provider) {
  if (!factory) throw Error("kernel registration for '" + key + "' has no factory");
  std::lock_guard<std::mutex> lock(mu_);
  entries_[std::move(key)].push_back(Entry{std::move(factory), std::move(provider)});
}

std::vector<KernelRegistry::Entry> KernelRegistry::lookup(std::string_view key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(std::string(key));
  if (it == entries_.end()) return {};
  return std::vector<Entry>(it->second.rbegin(), it->second.rend());
}

namespace {
std::atomic<uint64_t> next_registries_id{1};

// Filled during static initialization, before any Registries is constructed; read-only
// afterwards.
std::vector<CoreKernelSet>& coreKernelSets() {
  static auto* sets = new std::vector<CoreKernelSet>();
  return *sets;
}
}  // namespace

CoreKernelSetRegistration::CoreKernelSetRegistration(CoreKernelSet set) { coreKernelSets().push_back(set); }

void registerCoreKernels(Registries& registries) {
  for (CoreKernelSet set : coreKernelSets()) set(registries);
}

Registries::Registries() : id(next_registries_id++) {
  registerCoreKernels(*this);
  addBuiltinPasses(passes);
  addPartitionPass(*this);
}

void DelegateRegistry::add(std::string name, std::shared_ptr<const DelegateBackend> backend, std::string provider) {
  if (name.empty() || !backend) throw Error("delegate registration needs a name and a backend");
  std::lock_guard<std::mutex> lock(mu_);
  for (Entry& e : entries_)
    if (e.name == name) {
      if (e.provider != provider)
        throw Error("delegate backend '" + name + "' of plugin '" + provider + "' is already registered by '" +
                    e.provider + "'");
      e.backend = std::move(backend);
      return;
    }
  entries_.push_back(Entry{std::move(name), std::move(provider), std::move(backend)});
}

std::shared_ptr<const DelegateBackend> DelegateRegistry::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_)
    if (e.name == name) return e.backend;
  return nullptr;
}

std::vector<std::string> DelegateRegistry::names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const Entry& e : entries_) out.push_back(e.name);
  return out;
}
Registries::~Registries() = default;

Registries& Registries::global() {
  static auto* r = new Registries();  // never destroyed: kernels may outlive static teardown
  return *r;
}

void PluginRegistrar::outVariant(std::string key, KernelFactory factory) {
  registries_.out_variant.add(std::move(key), std::move(factory), provider_);
}
void PluginRegistrar::native(std::string key, KernelFactory factory) {
  registries_.native.add(std::move(key), std::move(factory), provider_);
}
void PluginRegistrar::pass(std::string name, int order, GraphPassFn fn, std::string help) {
  registries_.passes.add(GraphPass{provider_ + "." + name, order, provider_, std::move(help), std::move(fn)});
}
void PluginRegistrar::delegate(std::string name, std::shared_ptr<const DelegateBackend> backend) {
  registries_.delegates.add(std::move(name), std::move(backend), provider_);
}
void PluginRegistrar::addOption(PluginOptionSpec spec) { registries_.plugin_options.add(std::move(spec)); }

}  // namespace brisk
