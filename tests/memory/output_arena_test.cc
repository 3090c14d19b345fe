// Options::manage_output_tensors: output tensors of out-variant kernels come from an
// output arena that a run reuses only when the caller released every tensor of the
// previous run; while anything is held (the tensor, or a view of it) the next run uses
// another block, so results handed out are never overwritten.
#include <gtest/gtest.h>

#include "core/frontend/model_inputs.h"
#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "tests/testing/model_check.h"
#include "tools/ivalue_compare.h"
#include "tools/jit_reference.h"

namespace brisk {
namespace {

using testing::expectMatchesJit;
using testing::zooFile;
using testing::zooModel;

Options managedOutputs() {
  Options o;
  o.manage_output_tensors = true;
  // The arena serves out-variant kernels; a delegate partition's output (the model's
  // last linear layer here) is its own allocation.
  o.use_delegates = false;
  return o;
}

// Same shapes, other values.
ModelInputs scaled(const ModelInputs& in, double f) {
  ModelInputs out = cloneInputs(in);
  for (c10::IValue& a : out.args)
    if (a.isTensor() && a.toTensor().is_floating_point()) a.toTensor().mul_(f);
  return out;
}

const void* dataOf(const c10::IValue& v) { return v.toTensor().data_ptr(); }

TEST(OutputArena, OffByDefault) {
  auto module = Module::load(zooModel("mlp"));
  auto rt = module->createRuntime();
  ModelInputs in = loadInputs(zooFile("mlp.inputs.pt"));
  rt->run(in.args, in.kwargs);
  rt->run(in.args, in.kwargs);
  EXPECT_EQ(rt->memoryStats().output_arena_tensors, 0u);
}

TEST(OutputArena, HeldOutputsAreNeverOverwritten) {
  auto module = Module::load(zooModel("mlp"), managedOutputs());
  JitReference ref(zooModel("mlp"));
  auto rt = module->createRuntime();
  ModelInputs in = loadInputs(zooFile("mlp.inputs.pt"));
  rt->run(in.args, in.kwargs);  // sizes the arena
  std::vector<c10::IValue> held;
  std::vector<at::Tensor> copies;
  for (int i = 0; i < 4; ++i) {
    ModelInputs x = scaled(in, 1.0 + i);
    c10::IValue out = rt->run(x.args, x.kwargs);
    EXPECT_EQ(compareIValues(out, ref.run(cloneInputs(x))), "") << "run " << i;
    for (const c10::IValue& h : held) EXPECT_NE(dataOf(h), dataOf(out)) << "run " << i << " reused a held output";
    held.push_back(out);
    copies.push_back(out.toTensor().clone());
  }
  for (size_t i = 0; i < held.size(); ++i)
    EXPECT_TRUE(held[i].toTensor().equal(copies[i])) << "held output " << i << " was overwritten";
  MemoryStats s = rt->memoryStats();
  EXPECT_EQ(s.output_arena_tensors, 1u);
  EXPECT_GE(s.output_arena_second_blocks, 3u);
}

TEST(OutputArena, ReusedOnceReleased) {
  auto module = Module::load(zooModel("mlp"), managedOutputs());
  JitReference ref(zooModel("mlp"));
  auto rt = module->createRuntime();
  ModelInputs in = loadInputs(zooFile("mlp.inputs.pt"));
  rt->run(in.args, in.kwargs);              // sizes the arena
  const void* p = dataOf(rt->run(in.args, in.kwargs));  // written into the arena, released at once
  for (int i = 0; i < 3; ++i) {
    ModelInputs x = scaled(in, 0.5 * (i + 1));
    c10::IValue out = rt->run(x.args, x.kwargs);
    EXPECT_EQ(dataOf(out), p) << "run " << i << ": released arena not reused";
    EXPECT_EQ(compareIValues(out, ref.run(cloneInputs(x))), "");
  }
  MemoryStats s = rt->memoryStats();
  EXPECT_GE(s.output_arena_reuses, 3u);
  EXPECT_EQ(s.output_arena_second_blocks, 0u);
  EXPECT_GT(s.output_arena_bytes, 0u);
}

TEST(OutputArena, AHeldViewKeepsTheBlock) {
  auto module = Module::load(zooModel("mlp"), managedOutputs());
  auto rt = module->createRuntime();
  ModelInputs in = loadInputs(zooFile("mlp.inputs.pt"));
  rt->run(in.args, in.kwargs);
  at::Tensor view;
  {
    c10::IValue out = rt->run(in.args, in.kwargs);
    view = out.toTensor().view({-1});  // the tensor is released, a view of it is not
  }
  at::Tensor copy = view.clone();
  ModelInputs x = scaled(in, -3.0);
  c10::IValue out2 = rt->run(x.args, x.kwargs);
  EXPECT_NE(dataOf(out2), view.data_ptr());
  EXPECT_TRUE(view.equal(copy));
  EXPECT_EQ(rt->memoryStats().output_arena_second_blocks, 1u);
}

TEST(OutputArena, ResultsOutliveTheRuntime) {
  c10::IValue out;
  at::Tensor copy;
  {
    auto module = Module::load(zooModel("mlp"), managedOutputs());
    auto rt = module->createRuntime();
    ModelInputs in = loadInputs(zooFile("mlp.inputs.pt"));
    rt->run(in.args, in.kwargs);
    out = rt->run(in.args, in.kwargs);
    copy = out.toTensor().clone();
  }
  EXPECT_TRUE(out.toTensor().equal(copy));  // the block lives while a tensor points into it
}

class ZooManagedOutputs : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooManagedOutputs, MatchesInterpreter) {
  const std::string& m = GetParam();
  expectMatchesJit(zooModel(m), managedOutputs(),
                   {zooFile(m + ".inputs.pt"), zooFile(m + ".inputs2.pt"), zooFile(m + ".inputs.pt")});
}

TEST_P(ZooManagedOutputs, HeldResultsNeverOverwritten) {
  const std::string& m = GetParam();
  auto module = Module::load(zooModel(m), managedOutputs());
  auto rt = module->createRuntime();
  testing::expectHeldOutputsSurvive(*rt, loadInputs(zooFile(m + ".inputs.pt")), loadInputs(zooFile(m + ".inputs2.pt")),
                                    /*warmup=*/0, /*rounds=*/3);
}

INSTANTIATE_TEST_SUITE_P(All, ZooManagedOutputs,
                         ::testing::Values("mlp", "resnet18", "deepandwide", "transformer", "multi_output",
                                           "control_flow", "chain_add100", "inception_fork"));

}  // namespace
}  // namespace brisk
