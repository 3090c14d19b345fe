#include "tools/cli/common.h"

#include "core/common/error.h"
#include "core/kernels/plugin_loader.h"
#include "tools/cli/flags.h"
#include "tools/cli/format.h"
#include "tools/cli/timing.h"
#include "tools/jit_reference.h"

namespace brisk::cli {

LoadedModel loadModel(const ModelLocation& location, const Options& options) {
  LoadedModel m;
  m.location = location;
  double t0 = nowSeconds();
  m.module = Module::load(m.location.path, options);
  m.load_ms = (nowSeconds() - t0) * 1e3;
  return m;
}

c10::IValue runInterpreter(const JitReference& ref, const ModelInputs& inputs, const std::string& model_path) {
  try {
    return ref.run(inputs);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(Error::Where{model_path, "", ""},
                "the TorchScript interpreter failed on these inputs: " + describeException(e));
  }
}

std::string describePlugins() {
  std::vector<std::string> plugins;
  for (const PluginInfo& p : loadedPlugins()) plugins.push_back(p.name + " (" + p.path + ")");
  return plugins.empty() ? "none" : join(plugins, ", ");
}

std::string modelArg(const std::vector<std::string>& positional, const char* command) {
  if (positional.size() > 1)
    throw UsageError(std::string("'brisk ") + command + "' takes at most one MODEL, got '" + positional[1] + "'");
  return positional.empty() ? "" : positional[0];
}

}  // namespace brisk::cli
