#include "core/kernels/plugin_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <sys/stat.h>

#include "core/common/error.h"
#include "core/common/file_check.h"
#include "core/common/self_paths.h"
#include "core/kernels/elf_check.h"
#include "core/kernels/plugin.h"

namespace brisk {
namespace {

std::string selfDir() {
  const std::string exe = selfExe();
  return exe.substr(0, exe.rfind('/'));
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Where brisk's own plugins sit inside Bazel runfiles: one folder per plugin-producing
// package. Tests' plugins are found through Options::plugin_path like any user's.
const char* const kRunfilesPackages[] = {"ops_cpu", "ops_quantized", "delegates", "delegates/onednn", "delegates/aoti"};

std::vector<std::string> searchDirs(const std::vector<std::string>& extra) {
  std::vector<std::string> dirs = extra;
  if (const char* env = std::getenv("BRISK_PLUGIN_PATH"))
    for (auto& d : split(env, ':')) dirs.push_back(d);
  dirs.push_back(selfDir());
  for (const std::string& root : runfilesRoots())
    for (const char* pkg : kRunfilesPackages) dirs.push_back(root + "/brisk/" + pkg);
  return dirs;
}

// A plugin named by a file ("x/libfoo.so", "libfoo.so") rather than by name ("foo").
bool isPath(const std::string& name_or_path) {
  return name_or_path.find('/') != std::string::npos || name_or_path.find(".so") != std::string::npos;
}

std::string pluginName(const std::string& name_or_path) {
  std::string base = name_or_path.substr(name_or_path.rfind('/') + 1);
  if (base.rfind("libbrisk_", 0) == 0) base = base.substr(9);
  else if (base.rfind("lib", 0) == 0) base = base.substr(3);
  if (base.size() > 3 && base.compare(base.size() - 3, 3, ".so") == 0) base.resize(base.size() - 3);
  return base;
}

struct Loaded {
  void* handle;
  PluginInfo info;
  std::set<uint64_t> registered_into;  // Registries::id
};

std::mutex& loaderMutex() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, Loaded>& loadedByPath() {
  static auto* m = new std::map<std::string, Loaded>();  // never destroyed: handles stay open
  return *m;
}

Error pluginError(const std::string& what, const std::string& message) {
  return Error("plugin '" + what + "': " + message);
}

}  // namespace

std::string describeAbi(const PluginAbi& abi) {
  return "brisk ABI " + std::to_string(abi.brisk_abi) + ", torch " +
         std::to_string(abi.torch_version / 10000) + "." + std::to_string(abi.torch_version / 100 % 100) +
         "." + std::to_string(abi.torch_version % 100) + ", C++11 ABI " + std::to_string(abi.cxx11_abi);
}

std::string findPlugin(const std::string& name_or_path, const std::vector<std::string>& extra_dirs) {
  if (isPath(name_or_path)) return isRegularFile(name_or_path) ? name_or_path : "";
  const std::string file = "libbrisk_" + name_or_path + ".so";
  for (const auto& dir : searchDirs(extra_dirs)) {
    std::string candidate = dir + "/" + file;
    if (isRegularFile(candidate)) return candidate;
  }
  return "";
}

PluginInfo loadPlugin(const std::string& name_or_path, const std::vector<std::string>& extra_dirs,
                      Registries& registries) {
  std::string path = findPlugin(name_or_path, extra_dirs);
  if (path.empty()) {
    std::string dirs;
    for (const auto& d : searchDirs(extra_dirs)) dirs += (dirs.empty() ? "" : ":") + d;
    if (!isPath(name_or_path)) throw pluginError(name_or_path, "not found (searched " + dirs + ")");
    throw pluginError(name_or_path, pathExists(name_or_path) ? "cannot be loaded: it " + fileProblem(name_or_path)
                                                             : "file not found");
  }
  char real[PATH_MAX];
  std::string key = ::realpath(path.c_str(), real) ? std::string(real) : path;

  std::lock_guard<std::mutex> lock(loaderMutex());
  auto& loaded = loadedByPath();
  auto it = loaded.find(key);
  if (it == loaded.end()) {
    // One copy of a plugin per process: a second copy (the same library from another
    // folder) would register every kernel, pass and backend name again, and fail halfway
    // through, leaving the registries half-filled for every later load. A request by name
    // is served by the copy already loaded; a second copy by path is refused before it is
    // opened.
    const std::string name = pluginName(key);
    for (auto other = loaded.begin(); other != loaded.end(); ++other) {
      if (other->second.info.name != name) continue;
      if (!isPath(name_or_path)) {
        it = other;
        break;
      }
      throw pluginError(key, "is a second copy of plugin '" + name + "', already loaded from " + other->first +
                                 "; a process loads one copy of a plugin");
    }
  }
  if (it == loaded.end()) {
    if (std::string problem = elfSharedObjectProblem(key); !problem.empty())
      throw pluginError(key, "cannot be loaded: it " + problem);
    ::dlerror();
    void* handle = ::dlopen(key.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* err = ::dlerror();
      std::string why = err ? err : "unknown dlopen error";
      // dlerror names the library the loader could not find; where brisk's own plugins
      // get theirs (oneDNN for the onednn backend) is the set-up step.
      if (why.find("cannot open shared object file") != std::string::npos && why.rfind(key, 0) != 0)
        why += " (a library this plugin needs is not installed; tools/setup.sh installs those of brisk's plugins)";
      throw pluginError(key, "cannot be loaded: " + why);
    }
    it = loaded.emplace(key, Loaded{handle, PluginInfo{pluginName(key), key}, {}}).first;
  }
  Loaded& plugin = it->second;
  if (plugin.registered_into.count(registries.id)) return plugin.info;

  auto entry = reinterpret_cast<PluginEntryFn>(::dlsym(plugin.handle, kPluginEntrySymbol));
  if (!entry)
    throw pluginError(key, std::string("has no entry point '") + kPluginEntrySymbol +
                               "' (not a brisk plugin, or built without BRISK_PLUGIN)");
  const PluginAbi host = BRISK_CURRENT_ABI();
  PluginAbi theirs{};
  const char* body_error = nullptr;
  PluginRegistrar registrar(registries, plugin.info.name);
  int rc = entry(&host, &registrar, &theirs, &body_error);
  if (rc == 1)
    throw pluginError(key, "was built for " + describeAbi(theirs) + " but this host is " +
                               describeAbi(host) + "; rebuild the plugin against this brisk");
  if (rc != 0)
    throw pluginError(key, std::string("failed while registering: ") +
                               (body_error ? body_error : "unknown error"));
  plugin.registered_into.insert(registries.id);
  return plugin.info;
}

std::vector<PluginOptionSpec> declaredPluginOptions(const std::vector<std::string>& plugins,
                                                    const std::vector<std::string>& extra_dirs) {
  Registries registries;
  for (const std::string& p : plugins) {
    try {
      loadPlugin(p, extra_dirs, registries);
    } catch (const Error&) {
      // Listed by what can be loaded: Module::load reports the plugin's problem.
    }
  }
  return registries.plugin_options.all();
}

std::vector<PluginInfo> loadedPlugins() {
  std::lock_guard<std::mutex> lock(loaderMutex());
  std::vector<PluginInfo> out;
  for (auto& [k, v] : loadedByPath()) out.push_back(v.info);
  return out;
}

}  // namespace brisk
