#include "tests/fuzz/seeds.h"

#include <set>

#include "core/executor/module.h"

namespace brisk::fuzz {

const std::vector<FuzzSeed>& torchScriptSeeds() {
  static const std::vector<FuzzSeed> seeds = [] {
    std::vector<FuzzSeed> s;
    for (const char* m : {"mlp", "deepandwide", "control_flow", "multi_output", "inception_fork"})
      s.push_back({m, std::string(m) + ".pt", std::string(m) + ".inputs.pt", false});
    return s;
  }();
  return seeds;
}

const std::vector<FuzzSeed>& pt2Seeds() {
  static const std::vector<FuzzSeed> seeds{{"mlp.pt2", "mlp.pt2", "mlp.inputs.pt", true},
                                           {"mlp.core.pt2", "mlp.core.pt2", "mlp.inputs.pt", true},
                                           {"cond_model.pt2", "cond_model.pt2", "cond_model.inputs.pt", true},
                                           {"pytree_io.pt2", "pytree_io.pt2", "pytree_io.inputs.pt", true},
                                           {"pt2e_convnet.pt2", "pt2e_convnet.pt2", "pt2e_convnet.inputs.pt", true}};
  return seeds;
}

std::vector<FuzzSeed> allSeeds() {
  std::vector<FuzzSeed> all = torchScriptSeeds();
  all.insert(all.end(), pt2Seeds().begin(), pt2Seeds().end());
  return all;
}

FuzzContext fuzzerContext(const std::string& zoo, const std::string& work_dir) {
  FuzzContext ctx;
  ctx.work_dir = work_dir;
  std::set<std::string> inputs_seen;  // mlp.pt2 and mlp.core.pt2 share mlp's inputs
  for (const FuzzSeed& seed : allSeeds()) {
    FuzzContext one = seedContext(zoo + "/" + seed.model, zoo + "/" + seed.inputs, ctx.options, work_dir);
    ctx.models.push_back(one.models.front());
    if (inputs_seen.insert(seed.inputs).second) ctx.inputs.push_back(one.inputs.front());
  }
  return ctx;
}

}  // namespace brisk::fuzz
