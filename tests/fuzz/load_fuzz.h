#pragma once
// The fuzz entry for brisk's loading path: one file's bytes, as a model archive or as an
// inputs file, run the way a user's would be (Module::load + run, or loadInputs + run).
//
// The product rule being checked: bad input gets one brisk::Error, never a crash, an
// abort, another exception type, or a hang. runFuzzCase returns normally for a file
// brisk accepted or refused with a well-formed brisk::Error; it throws FuzzFinding for
// anything else it can see (a foreign exception, a malformed error). Crashes and hangs
// are for the caller to catch (sanitizers, CaseGuard in case_guard.h).
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/frontend/model_inputs.h"
#include "core/common/options.h"

namespace brisk {
class Module;
}

namespace brisk::fuzz {

enum class FuzzTarget { kModelArchive, kInputsFile };
const char* targetName(FuzzTarget t);

// What a mutated file runs with.
struct FuzzContext {
  std::string work_dir;  // the case's bytes are written to a file here
  Options options;
  std::vector<ModelInputs> inputs;              // a mutated model runs with each of these
  std::vector<std::shared_ptr<Module>> models;  // mutated inputs run on each of these
};

struct FuzzOutcome {
  bool loaded = false;     // Module::load / loadInputs accepted the file
  size_t runs_ok = 0;      // runs that returned a value
  size_t runs_refused = 0; // runs that threw brisk::Error
  std::string error;       // the load's brisk::Error message when it refused the file
};

struct FuzzFinding : std::runtime_error {
  using std::runtime_error::runtime_error;
};

FuzzOutcome runFuzzCase(std::string_view bytes, FuzzTarget target, const FuzzContext& ctx);

// The context a seed model gets: the Module (loaded once) and its bundled inputs.
FuzzContext seedContext(const std::string& model_path, const std::string& inputs_path, const Options& options,
                        const std::string& work_dir);

std::string readFileBytes(const std::string& path);

// $TEST_TMPDIR, or /tmp outside Bazel.
std::string fuzzTmpDir();
// Writes a failing (or replayed) case's bytes to the test's undeclared outputs (or the
// tmp dir) as <name with '/' and '#' made '_'><suffix>, so it can be reproduced.
void saveCaseFile(const std::string& name, const std::string& bytes, const std::string& suffix);

}  // namespace brisk::fuzz
