#include "core/kernel_registry.h"

#include <algorithm>
#include <atomic>

#include "core/delegate.h"
#include "core/error.h"
#include "core/graph.h"
#include "core/plugin.h"

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

std::vector<std::string> KernelRegistry::keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (auto& [k, v] : entries_) out.push_back(k);
  std::sort(out.begin(), out.end());
  return out;
}

size_t KernelRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void DelegateRegistry::add(std::shared_ptr<DelegateBackend> backend, std::string provider) {
  std::lock_guard<std::mutex> lock(mu_);
  backends_.emplace_back(std::move(backend), std::move(provider));
}

std::shared_ptr<DelegateBackend> DelegateRegistry::lookup(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = backends_.rbegin(); it != backends_.rend(); ++it)
    if (it->first->name() == name) return it->first;
  return nullptr;
}

std::vector<std::string> DelegateRegistry::names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (auto& [b, p] : backends_) out.push_back(b->name());
  return out;
}

namespace {
std::atomic<uint64_t> next_registries_id{1};
}

Registries::Registries() : delegates(std::make_unique<DelegateRegistry>()), id(next_registries_id++) {
  registerCoreKernels(*this);
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
void PluginRegistrar::delegate(std::shared_ptr<DelegateBackend> backend) {
  registries_.delegates->add(std::move(backend), provider_);
}

}  // namespace brisk
