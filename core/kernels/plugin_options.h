#pragma once
// Options a plugin declares when it registers (PluginRegistrar::option). Users set them
// by "plugin.name" in Options::plugin_options (CLI --plugin-option, Python
// plugin_options=), so core never names a plugin's knob; once the plugins are loaded,
// Module::load refuses a name no plugin declares or a value of the wrong type with one
// error naming the option and the plugin.
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/common/options.h"

namespace brisk {

struct PluginOptionSpec {
  std::string plugin;               // provider name ("ops_cpu")
  std::string name;                 // "small_gemm"
  PluginOptionValue default_value;  // its alternative is the option's type
  std::string help;
  std::string key() const { return plugin + "." + name; }
};

// "bool", "int" or "str": the type a spec's default holds.
const char* pluginOptionTypeName(const PluginOptionValue& v);

// The value of `spec` in `o`: the one set in o.plugin_options (text parsed as the
// declared type), else the default. Throws brisk::Error naming option and plugin for a
// value that does not fit.
PluginOptionValue pluginOptionValue(const Options& o, const PluginOptionSpec& spec);

// What PluginRegistrar::option returns: kernel factories read the value at load through
// KernelBuildContext::pluginOption.
template <typename T>
class PluginOption {
 public:
  explicit PluginOption(PluginOptionSpec spec) : spec_(std::move(spec)) {}
  T get(const Options& o) const { return std::get<T>(pluginOptionValue(o, spec_)); }
  const PluginOptionSpec& spec() const { return spec_; }

 private:
  PluginOptionSpec spec_;
};

// The options declared by the plugins registered into one Registries.
class PluginOptionRegistry {
 public:
  // A plugin registered again (same key) replaces its declaration.
  void add(PluginOptionSpec spec);
  // By key, in key order.
  std::vector<PluginOptionSpec> all() const;
  // Throws one brisk::Error (naming `model`, the option and its plugin) for the first
  // entry of o.plugin_options that no loaded plugin declares or whose value does not fit.
  void validate(const Options& o, const std::string& model) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, PluginOptionSpec> specs_;
};

// The README's plugin options table (header included).
std::string renderPluginOptionsMarkdown(const std::vector<PluginOptionSpec>& specs);

}  // namespace brisk
