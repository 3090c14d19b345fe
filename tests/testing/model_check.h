#pragma once
// Shared helpers so each model test reads like a specification:
//   expectMatchesJit(zooModel("mlp"), options);
#include <functional>
#include <string>
#include <vector>

#include "core/frontend/model_inputs.h"
#include "core/common/options.h"
#include "tools/ivalue_compare.h"

namespace brisk {
class Runtime;
}

namespace brisk::testing {

// Path of a zoo file in the test's runfiles ("mlp" -> .../tools/zoo/mlp.pt).
std::string zooModel(const std::string& name);
std::string zooFile(const std::string& file);
// A file under the test's runfiles root ("brisk/..." is prepended).
std::string runfile(const std::string& path);

// Loads the model with brisk and with the TorchScript interpreter, then for each
// inputs file (default: <model>.inputs.pt and, if given, more): runs brisk three
// times, checking every output against the interpreter's and that the inputs are left
// unchanged. Reports failures through gtest.
void expectMatchesJit(const std::string& model_path, const Options& options,
                      const std::vector<std::string>& input_files, Tolerance tol = {});

// The message of the brisk::Error `f` throws, checked to be one line; a gtest failure
// (and "") when it throws none.
std::string errorOf(const std::function<void()>& f);

// Outputs a caller holds are never overwritten by later runs: runs `rt` `warmup` times
// on `held`, holds the next run's outputs, then runs `other` and `held` alternately
// `rounds` times and checks the held outputs bit for bit against a copy taken when
// they were returned.
void expectHeldOutputsSurvive(Runtime& rt, const ModelInputs& held, const ModelInputs& other, int warmup, int rounds);

}  // namespace brisk::testing
