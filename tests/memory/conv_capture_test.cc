// Outputs of allocating kernels (convolution other than depthwise) live in the planned
// slab: the conv kernel's OutputCapture gets its result allocation served at the planned offset (no
// copy), results match the TorchScript interpreter across input shapes (inputs ->
// inputs2 -> inputs), and the profile run is lean (managed tensors are given back after
// their last use, so its peak is near the largest live set, not the sum of all).
#include <gtest/gtest.h>

#include <cstdio>

#include "core/graph/graph.h"
#include "core/frontend/model_inputs.h"
#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "tests/testing/model_check.h"
#include "tools/ivalue_compare.h"
#include "tools/jit_reference.h"

namespace brisk {
namespace {

using testing::zooFile;
using testing::zooModel;

// ops_cpu's conv kernels: no delegate backend takes the convs (DelegateCapture below
// checks the onednn partitions).
Options planned() {
  Options o;
  o.memory_planning = true;
  o.planner = "greedy_by_size";
  o.use_delegates = false;
  return o;
}

// Managed conv outputs: conv nodes whose kernel is out-variant (retained) — all of
// them in these models except a conv whose output is returned.
size_t convNodes(const Module& m) {
  size_t n = 0;
  for (const NodeKernelInfo& k : m.kernelReport())
    if (k.op.rfind("aten::conv2d", 0) == 0 || k.op.rfind("aten::_convolution", 0) == 0) ++n;
  return n;
}

// Depthwise convs (a constant C x 1 x kh x kw filter with groups == C > 1, not 1x1):
// ops_cpu writes them directly into their planned output (ops_cpu/simd/depthwise_nchw.h),
// with no allocation to capture and no oneDNN buffers.
size_t depthwiseConvNodes(const Module& m) {
  size_t n = 0;
  for (const Node* node : m.compiled()->graph().top()->nodes()) {
    if (node->kind() != "aten::conv2d") continue;
    const Value* w = node->input(1);
    const Value* g = node->input(6);
    if (!w->isConstant() || !g->isConstant() || !w->constant().isTensor()) continue;
    const at::Tensor& t = w->constant().toTensor();
    const int64_t groups = g->constant().toInt();
    if (groups > 1 && t.size(0) == groups && t.size(1) == 1 && t.size(2) * t.size(3) > 1) ++n;
  }
  return n;
}

class ConvCapture : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvCapture, ConvOutputsServedFromSlabAndMatchInterpreter) {
  const std::string model = GetParam();
  auto module = Module::load(zooModel(model), planned());
  JitReference ref(zooModel(model));
  auto rt = module->createRuntime();
  const size_t convs = convNodes(*module), depthwise = depthwiseConvNodes(*module);
  ASSERT_GT(convs, depthwise);
  if (model == "mobilenet_v2") EXPECT_EQ(depthwise, 17u);
  const std::string files[] = {model + ".inputs.pt", model + ".inputs2.pt", model + ".inputs.pt"};
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    ModelInputs in = loadInputs(zooFile(f));
    c10::IValue expected = ref.run(cloneInputs(in));
    for (int run = 0; run < 3; ++run) {
      c10::IValue got = rt->run(in.args, in.kwargs);
      EXPECT_EQ(compareIValues(got, expected), "") << "run " << run;
    }
    // After a shape change the first run re-plans (and re-learns which allocation is
    // the result); by the third run of the same shapes every conv is served.
    MemoryStats s = rt->memoryStats();
    std::printf("%s %s: convs=%zu depthwise=%zu managed=%zu captured=%zu misses=%zu slab=%zu lower_bound=%zu\n",
                model.c_str(), f.c_str(), convs, depthwise, s.managed_tensors, s.captured_outputs, s.capture_misses,
                s.slab_bytes, s.lower_bound);
    EXPECT_EQ(s.captured_outputs, convs - depthwise);
    EXPECT_EQ(s.capture_misses, 0u);
    // oneDNN's reorder buffers are served from the slab too (core/memory/memory_plan.h).
    EXPECT_GT(s.scratch_allocations, 0u);
    EXPECT_GT(s.scratch_bytes, 0u);
    EXPECT_GE(s.managed_tensors, convs);
    EXPECT_EQ(s.evictions, 0u);
  }
}

// The onednn delegate's conv partitions allocate their result through ATen like ATen's
// conv: brisk serves it from the slab, and the call's temporaries (the NHWC copy of the
// model's NCHW input) from step-local scratch.
TEST_P(ConvCapture, DelegatePartitionOutputsServedFromSlab) {
  const std::string model = GetParam();
  Options o = planned();
  o.use_delegates = true;
  auto module = Module::load(zooModel(model), o);
  size_t conv_partitions = 0;
  for (const NodeKernelInfo& k : module->kernelReport())
    conv_partitions += k.kind == KernelKind::kDelegate && k.detail.rfind("onednn: conv", 0) == 0;
  ASSERT_GT(conv_partitions, 0u);
  JitReference ref(zooModel(model));
  auto rt = module->createRuntime();
  for (const std::string& f : {model + ".inputs.pt", model + ".inputs2.pt", model + ".inputs.pt"}) {
    SCOPED_TRACE(f);
    ModelInputs in = loadInputs(zooFile(f));
    c10::IValue expected = ref.run(cloneInputs(in));
    for (int run = 0; run < 3; ++run)
      EXPECT_EQ(compareIValues(rt->run(in.args, in.kwargs), expected, Tolerance{1e-4, 1e-4}), "") << "run " << run;
    MemoryStats s = rt->memoryStats();
    EXPECT_EQ(s.captured_outputs, conv_partitions);
    EXPECT_EQ(s.capture_misses, 0u);
    EXPECT_GT(s.scratch_allocations, 0u);
    EXPECT_EQ(s.evictions, 0u);
  }
}

TEST_P(ConvCapture, HeldResultsAreNotOverwritten) {
  const std::string model = GetParam();
  auto module = Module::load(zooModel(model), planned());
  auto rt = module->createRuntime();
  testing::expectHeldOutputsSurvive(*rt, loadInputs(zooFile(model + ".inputs.pt")),
                                    loadInputs(zooFile(model + ".inputs2.pt")), /*warmup=*/3, /*rounds=*/3);
}

TEST_P(ConvCapture, WithoutPlanningConvIsNotRetained) {
  const std::string model = GetParam();
  Options o;
  o.memory_planning = false;
  auto module = Module::load(zooModel(model), o);
  for (const NodeKernelInfo& k : module->kernelReport())
    if (k.op == "aten::conv2d") {
      EXPECT_EQ(k.kind, KernelKind::kOutVariant) << k.node;
      EXPECT_EQ(k.outputs, OutputContract::kCaptured) << k.node;
    }
  ModelInputs in = loadInputs(zooFile(model + ".inputs.pt"));
  JitReference ref(zooModel(model));
  EXPECT_EQ(compareIValues(module->run(in.args, in.kwargs), ref.run(cloneInputs(in))), "");
}

INSTANTIATE_TEST_SUITE_P(Zoo, ConvCapture, ::testing::Values("resnet18", "mobilenet_v2", "inception_nofork"));

// The profile run frees managed tensors after their last use: its peak of managed
// bytes held at once stays near the planned slab (the largest live set), far below the
// sum of all managed tensors that a non-lean profile run would hold at its end.
TEST(LeanProfileRun, PeakNearLargestLiveSet) {
  // Without in-place reuse: more managed tensors, so "far below the sum" is meaningful.
  Options o = planned();
  o.inplace_reuse = false;
  for (const char* model : {"resnet18", "mobilenet_v2"}) {
    SCOPED_TRACE(model);
    auto module = Module::load(zooModel(model), o);
    auto rt = module->createRuntime();
    ModelInputs in = loadInputs(zooFile(std::string(model) + ".inputs.pt"));
    rt->run(in.args, in.kwargs);
    MemoryStats s = rt->memoryStats();
    std::printf("%s: profile peak %zu, sum of managed %zu, slab %zu, lower bound %zu\n", model,
                s.profile_peak_bytes, s.profile_total_bytes, s.slab_bytes, s.lower_bound);
    ASSERT_GT(s.lower_bound, 0u);
    EXPECT_GE(s.profile_peak_bytes, s.lower_bound / 2);  // it did measure something
    EXPECT_LE(s.profile_peak_bytes, s.lower_bound + s.lower_bound / 2);
    EXPECT_LT(s.profile_peak_bytes * 3, s.profile_total_bytes);
  }
}

}  // namespace
}  // namespace brisk
