// Slab size against the lower bound (largest sum of simultaneously live bytes) for
// every zoo model with greedy_by_size, and RSS staying flat over repeated runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "core/frontend/model_inputs.h"
#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

using testing::zooFile;
using testing::zooModel;

const char* const kModels[] = {"resnet18",     "mobilenet_v2",   "mlp",              "deepandwide",
                               "transformer",  "inception_fork", "inception_nofork", "control_flow",
                               "multi_output", "chain_mul100",   "chain_add100",     "lstm_tagger",
                               "gru_encoder"};

// greedy_by_size's quality on the graphs of brisk's own kernels: with the onednn
// partitions inception_nofork's intervals tighten and greedy_by_size lands at 1.12x of
// the lower bound (the default planner, best_of_orders, reaches it).
Options planned() {
  Options o;
  o.memory_planning = true;
  o.planner = "greedy_by_size";
  o.use_delegates = false;
  return o;
}

TEST(Slab, GreedyBySizeWithinTenPercentOfLowerBound) {
  std::printf("%-18s %8s %12s %12s %7s\n", "model", "managed", "slab bytes", "lower bound", "ratio");
  for (const char* model : kModels) {
    SCOPED_TRACE(model);
    auto module = Module::load(zooModel(model), planned());
    auto rt = module->createRuntime();
    ModelInputs in = loadInputs(zooFile(std::string(model) + ".inputs.pt"));
    for (int i = 0; i < 3; ++i) rt->run(in.args, in.kwargs);
    MemoryStats s = rt->memoryStats();
    const double ratio = s.lower_bound ? static_cast<double>(s.slab_bytes) / s.lower_bound : 1.0;
    std::printf("%-18s %8zu %12zu %12zu %7.3f\n", model, s.managed_tensors, s.slab_bytes, s.lower_bound, ratio);
    EXPECT_EQ(s.replans, 0u);
    EXPECT_GE(s.slab_bytes, s.lower_bound);
    EXPECT_LE(ratio, 1.10);
  }
  std::fflush(stdout);
}

size_t residentBytes() {
  std::ifstream f("/proc/self/statm");
  size_t total = 0, resident = 0;
  f >> total >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

TEST(Slab, RssStaysFlatOverRepeatedRuns) {
  auto module = Module::load(zooModel("mlp"), planned());
  auto rt = module->createRuntime();
  ModelInputs in = loadInputs(zooFile("mlp.inputs.pt"));
  ModelInputs in2 = loadInputs(zooFile("mlp.inputs2.pt"));
  for (int i = 0; i < 20; ++i) rt->run(i % 2 ? in.args : in2.args, i % 2 ? in.kwargs : in2.kwargs);
  const size_t before = residentBytes();
  for (int i = 0; i < 200; ++i) rt->run(i % 2 ? in.args : in2.args, i % 2 ? in.kwargs : in2.kwargs);
  const size_t after = residentBytes();
  std::printf("RSS before %zu KiB, after 200 runs %zu KiB\n", before / 1024, after / 1024);
  EXPECT_LT(after, before + (20u << 20));
  EXPECT_EQ(rt->memoryStats().replans, 0u);  // both input sets seen during warm-up
}

}  // namespace
}  // namespace brisk
