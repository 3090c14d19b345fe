#pragma once
// Finds, dlopens and registers plugins. Each shared object is opened once per process
// (keyed by its real path) and registered once per Registries instance; it is never
// closed, because kernels built from it may outlive any Module.
#include <string>
#include <vector>

namespace brisk {

struct Registries;
struct PluginOptionSpec;

struct PluginInfo {
  std::string name;  // provider name used in `brisk inspect` ("ops_cpu")
  std::string path;  // real path of the shared object
};

// Resolves a plugin name ("ops_cpu" -> libbrisk_ops_cpu.so) or a path to a file.
// Search order: `extra_dirs`, $BRISK_PLUGIN_PATH (colon-separated), the running
// binary's directory, then its Bazel runfiles. Returns "" when not found.
std::string findPlugin(const std::string& name_or_path, const std::vector<std::string>& extra_dirs);

// Loads and registers a plugin into `registries`. Throws brisk::Error naming the file
// for: missing file, dlopen failure (undefined symbols...), missing entry point,
// another ABI version, or a plugin body that throws.
PluginInfo loadPlugin(const std::string& name_or_path, const std::vector<std::string>& extra_dirs,
                      Registries& registries);

// The options `plugins` declare (PluginRegistrar::option), registered into registries of
// their own, so listing them (`brisk help`, the README check) changes no Module's
// kernels. Plugins that cannot be loaded are skipped.
std::vector<PluginOptionSpec> declaredPluginOptions(const std::vector<std::string>& plugins,
                                                    const std::vector<std::string>& extra_dirs);

// Plugins loaded so far in this process.
std::vector<PluginInfo> loadedPlugins();

}  // namespace brisk
