// Every zoo model, run by brisk, matches the TorchScript interpreter on the model's
// example inputs and on a second input set (another shape or branch), three runs
// each, with inputs left unchanged — both with the default kernels and with every
// node forced to the fallback kernel.
#include <gtest/gtest.h>

#include "tests/testing/model_check.h"

namespace brisk {
namespace {

using testing::expectMatchesJit;
using testing::zooFile;
using testing::zooModel;

struct Case {
  std::string model;
  bool fallback_only;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.model << (c.fallback_only ? " (fallback only)" : ""); }

class ZooModels : public ::testing::TestWithParam<Case> {};

TEST_P(ZooModels, MatchesInterpreter) {
  const Case& c = GetParam();
  Options options;
  options.fallback_only = c.fallback_only;
  expectMatchesJit(zooModel(c.model), options,
                   {zooFile(c.model + ".inputs.pt"), zooFile(c.model + ".inputs2.pt"),
                    zooFile(c.model + ".inputs.pt")});
}

std::vector<Case> allCases() {
  std::vector<Case> out;
  for (const char* m : {"resnet18", "mobilenet_v2", "mlp", "deepandwide", "transformer", "inception_fork",
                        "inception_nofork", "control_flow", "multi_output", "chain_mul100", "chain_add100",
                        "lstm_tagger", "gru_encoder"})
    for (bool fb : {false, true}) out.push_back({m, fb});
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, ZooModels, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.model + (info.param.fallback_only ? "_fallback" : "_default");
                         });

}  // namespace
}  // namespace brisk
