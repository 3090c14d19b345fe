// Every zoo model with memory planning, under every layout algorithm, matches the
// TorchScript interpreter: example inputs, then the second (usually larger) set, which
// forces a re-plan, then the first again. Results handed to the caller are never
// overwritten by later runs.
#include <gtest/gtest.h>

#include "core/frontend/model_inputs.h"
#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "planners/registry.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

using testing::expectMatchesJit;
using testing::zooFile;
using testing::zooModel;

const char* const kModels[] = {"resnet18",         "mobilenet_v2", "mlp",          "deepandwide",
                               "transformer",      "inception_fork", "inception_nofork", "control_flow",
                               "multi_output",     "chain_mul100", "chain_add100", "lstm_tagger",
                               "gru_encoder"};

Options planned(const std::string& planner) {
  Options o;
  o.memory_planning = true;
  o.planner = planner;
  return o;
}

struct Case {
  std::string model;
  std::string planner;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.model << " / " << c.planner; }

class ZooPlanned : public ::testing::TestWithParam<Case> {};

TEST_P(ZooPlanned, MatchesInterpreter) {
  const Case& c = GetParam();
  expectMatchesJit(zooModel(c.model), planned(c.planner),
                   {zooFile(c.model + ".inputs.pt"), zooFile(c.model + ".inputs2.pt"),
                    zooFile(c.model + ".inputs.pt")});
}

std::vector<Case> allCases() {
  std::vector<Case> out;
  for (const char* m : kModels)
    for (const std::string& p : planners::PlannerRegistry::global().names()) out.push_back({m, p});
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, ZooPlanned, ::testing::ValuesIn(allCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.model + "_" + info.param.planner;
                         });

class ZooResults : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooResults, NeverOverwrittenByLaterRuns) {
  const std::string& model = GetParam();
  auto module = Module::load(zooModel(model), planned("greedy_by_size"));
  auto rt = module->createRuntime();
  testing::expectHeldOutputsSurvive(*rt, loadInputs(zooFile(model + ".inputs.pt")),
                                    loadInputs(zooFile(model + ".inputs2.pt")), /*warmup=*/0, /*rounds=*/2);
}

INSTANTIATE_TEST_SUITE_P(All, ZooResults, ::testing::ValuesIn(std::vector<std::string>(std::begin(kModels), std::end(kModels))));

}  // namespace
}  // namespace brisk
