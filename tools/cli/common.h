#pragma once
// Pieces shared by the brisk CLI's subcommands.
#include <memory>
#include <string>
#include <vector>

#include "core/executor/module.h"
#include "tools/cli/model_locator.h"

namespace brisk::cli {

struct LoadedModel {
  ModelLocation location;
  std::shared_ptr<Module> module;
  double load_ms = 0;
};
// Loads a located model with `options`, timing the load. Throws brisk::Error.
LoadedModel loadModel(const ModelLocation& location, const Options& options);

// "nodes=12 out-variant=3 native=5 delegate=0 fallback=4"
std::string describeStats(const ModuleStats& s);
std::string statsJson(const ModuleStats& s);

// "plugins loaded: ops_cpu (/path/libbrisk_ops_cpu.so)" style list; "none" when empty.
std::string describePlugins();

// Fixed-point formatting with `digits` decimals.
std::string fixed(double v, int digits);

// Monotonic clock in seconds.
double nowSeconds();

// The first positional (MODEL), or "" when none; more than `max` positionals is a
// usage error.
std::string modelArg(const std::vector<std::string>& positional, const char* command);

}  // namespace brisk::cli
