#pragma once
// Pieces shared by the brisk CLI's subcommands.
#include <memory>
#include <string>
#include <vector>

#include "core/executor/module.h"
#include "core/frontend/model_inputs.h"
#include "tools/cli/model_locator.h"

namespace brisk {
class JitReference;
}

namespace brisk::cli {

struct LoadedModel {
  ModelLocation location;
  std::shared_ptr<Module> module;
  double load_ms = 0;
};
// Loads a located model with `options`, timing the load. Throws brisk::Error.
LoadedModel loadModel(const ModelLocation& location, const Options& options);

// The TorchScript interpreter's output on `inputs` (for `run --check` and bench's
// check). Its failures become a brisk::Error naming the model: they are the inputs'
// fault, not brisk's, and the CLI prints brisk::Errors as one line.
c10::IValue runInterpreter(const JitReference& ref, const ModelInputs& inputs, const std::string& model_path);

// "plugins loaded: ops_cpu (/path/libbrisk_ops_cpu.so)" style list; "none" when empty.
std::string describePlugins();

// The first positional (MODEL), or "" when none; more than one is a usage error.
std::string modelArg(const std::vector<std::string>& positional, const char* command);

}  // namespace brisk::cli
