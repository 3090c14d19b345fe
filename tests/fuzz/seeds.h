#pragma once
// The fuzz seeds: zoo model archives, each with the inputs file it runs on. One list for
// the deterministic driver (load_fuzz_test), the libFuzzer targets' context
// (load_fuzzer.cc) and their seed corpus (BUILD.bazel's FUZZ_SEED_FILES, checked against
// this list by fuzz_corpus_test).
#include <string>
#include <vector>

#include "tests/fuzz/load_fuzz.h"

namespace brisk::fuzz {

struct FuzzSeed {
  std::string name;    // the case names' prefix: "mlp" (TorchScript), "mlp.pt2" (PT2)
  std::string model;   // zoo file name: "mlp.pt", "mlp.core.pt2"
  std::string inputs;  // zoo file name: "mlp.inputs.pt"
  bool pt2 = false;    // a torch.export archive (pt2_mutators.h) rather than TorchScript
};

// Small models whose load takes well under a second: the budget goes into cases, not
// into loading resnet18 a thousand times. TorchScript: mlp, deepandwide, control_flow,
// multi_output, inception_fork. PT2: mlp.pt2, mlp.core.pt2 (core ATen IR),
// cond_model.pt2 (torch.cond), pytree_io.pt2 (nested inputs and outputs).
const std::vector<FuzzSeed>& torchScriptSeeds();
const std::vector<FuzzSeed>& pt2Seeds();
std::vector<FuzzSeed> allSeeds();

// The context libFuzzer's targets run each case in: every seed's Module (loaded and run
// once) and inputs, from the zoo directory `zoo`. A mutated model runs with every seed's
// inputs (a PT2 archive's own among them); mutated inputs run on every seed model.
FuzzContext fuzzerContext(const std::string& zoo, const std::string& work_dir);

}  // namespace brisk::fuzz
