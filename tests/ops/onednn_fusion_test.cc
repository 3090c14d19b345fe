// The onednn delegate backend (delegates/onednn) on small graphs against the
// interpreter: each conv or linear chain it claims becomes one delegate node whose fused
// oneDNN call must match ATen's separate ops, for several input shapes (each packs its
// own weight), and what it cannot serve for a call (a broadcasting add, too few rows)
// runs the nested block on brisk's kernels. A backend option of the wrong type is a
// load error.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "core/kernels/delegate.h"
#include "tests/ops/op_tester.h"
#include "tests/testing/model_check.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kDelegate = KernelKind::kDelegate;
// oneDNN's convolutions and matmuls sum in other orders than ATen's.
const Tolerance kTol{1e-4, 1e-4};

// conv2d(x, W, b) with constant W [oc, ic/groups, k, k] and b, then `tail` (IR lines
// reading %y and defining %out).
std::string convIR(int64_t oc, int64_t icg, int64_t k, const std::string& stride, const std::string& pad,
                   const std::string& dil, int64_t groups, const std::string& tail, const std::string& params = "") {
  return "graph(%x : Tensor" + params + "):\n" + constTensorIR("w", {oc, icg, k, k}) + constTensorIR("b", {oc}) +
         "  %s : int[] = prim::Constant[value=" + stride + "]()\n" + "  %p : int[] = prim::Constant[value=" + pad +
         "]()\n" + "  %d : int[] = prim::Constant[value=" + dil + "]()\n" +
         "  %g : int = prim::Constant[value=" + std::to_string(groups) + "]()\n" +
         "  %y : Tensor = aten::conv2d(%x, %w, %b, %s, %p, %d, %g)\n" + tail + "  return (%out)\n";
}

// Input sets of several ranks (strict_inputs would fix the first one's).
void expectPartition(OpTester&& t) {
  Options o;
  o.strict_inputs = false;
  o.plugin_options["onednn.linear"] = true;  // on any CPU (its default follows AVX-512)
  o.plugin_options["onednn.linear_min_macs"] = int64_t{0};  // the tests' small shapes too
  t.options(o).withDelegates().tolerance(kTol).expectKernel(kDelegateKind, kDelegate).run();
}

TEST(OneDnnFusion, ConvActivations) {
  const std::pair<const char*, const char*> kTails[] = {
      {"relu", "  %out : Tensor = aten::relu(%y)\n"},
      {"relu6", "  %out : Tensor = aten::relu6(%y)\n"},
      {"hardtanh", "  %lo : float = prim::Constant[value=-0.5]()\n  %hi : float = prim::Constant[value=2.]()\n"
                   "  %out : Tensor = aten::hardtanh(%y, %lo, %hi)\n"},
      {"gelu", "  %a : str = prim::Constant[value=\"none\"]()\n  %out : Tensor = aten::gelu(%y, %a)\n"},
      {"gelu tanh", "  %a : str = prim::Constant[value=\"tanh\"]()\n  %out : Tensor = aten::gelu(%y, %a)\n"},
      {"silu", "  %out : Tensor = aten::silu(%y)\n"},
      {"sigmoid", "  %out : Tensor = aten::sigmoid(%y)\n"},
      {"hardswish", "  %out : Tensor = aten::hardswish(%y)\n"},
      {"hardsigmoid", "  %out : Tensor = aten::hardsigmoid(%y)\n"},
      {"tanh", "  %out : Tensor = aten::tanh(%y)\n"},
      {"leaky_relu", "  %sl : float = prim::Constant[value=0.1]()\n  %out : Tensor = aten::leaky_relu(%y, %sl)\n"},
      {"none", "  %out : Tensor = aten::neg(%y)\n"},  // the conv alone; neg stays outside
  };
  for (const auto& [name, tail] : kTails) {
    SCOPED_TRACE(name);
    expectPartition(std::move(OpTester(convIR(8, 4, 3, "[1, 1]", "[1, 1]", "[1, 1]", 1, tail))
                                  .inputs({at::randn({1, 4, 9, 9})})
                                  .inputs({at::randn({3, 4, 12, 7})})));
  }
}

// The partition converts an NCHW input with oneDNN's reorder, takes a channels-last one
// as it is and any other strides through ATen's copy; a result read by an op that needs
// NCHW (neg here) is converted back.
TEST(OneDnnFusion, ConvInputsOfAnyLayout) {
  for (const char* tail : {"  %out : Tensor = aten::relu(%y)\n", "  %out : Tensor = aten::neg(%y)\n"}) {
    SCOPED_TRACE(tail);
    expectPartition(std::move(OpTester(convIR(8, 4, 3, "[1, 1]", "[1, 1]", "[1, 1]", 1, tail))
                                  .inputs({at::randn({2, 4, 9, 9})})
                                  .inputs({at::randn({2, 4, 9, 9}).contiguous(at::MemoryFormat::ChannelsLast)})
                                  .inputs({at::randn({2, 4, 9, 9}).transpose(2, 3)})
                                  .inputs({at::randn({2, 9, 4, 9}).transpose(1, 2)})));
  }
}

TEST(OneDnnFusion, ConvGeometries) {
  const std::string relu = "  %out : Tensor = aten::relu(%y)\n";
  // 1x1, strided, dilated, grouped, depthwise, asymmetric padding.
  expectPartition(std::move(OpTester(convIR(16, 8, 1, "[1, 1]", "[0, 0]", "[1, 1]", 1, relu))
                                .inputs({at::randn({2, 8, 7, 7})})));
  expectPartition(std::move(OpTester(convIR(8, 4, 3, "[2, 2]", "[1, 1]", "[1, 1]", 1, relu))
                                .inputs({at::randn({1, 4, 15, 15})})
                                .inputs({at::randn({2, 4, 8, 9})})));
  expectPartition(std::move(OpTester(convIR(8, 4, 3, "[1, 1]", "[2, 2]", "[2, 2]", 1, relu))
                                .inputs({at::randn({1, 4, 10, 10})})));
  expectPartition(std::move(OpTester(convIR(8, 2, 3, "[1, 1]", "[1, 1]", "[1, 1]", 4, relu))
                                .inputs({at::randn({2, 8, 6, 6})})));
  expectPartition(std::move(OpTester(convIR(16, 1, 3, "[2, 2]", "[1, 1]", "[1, 1]", 16, relu))
                                .inputs({at::randn({1, 16, 14, 14})})
                                .inputs({at::randn({2, 16, 9, 9})})));
  expectPartition(std::move(OpTester(convIR(8, 4, 3, "[1, 2]", "[0, 1]", "[1, 1]", 1, relu))
                                .inputs({at::randn({1, 4, 9, 11})})));
}

// batch_norm(%y) with constant statistics for `oc` channels (the partition folds it into
// the weight), then `tail` reading %bn.
std::string batchNormTail(int64_t oc, const std::string& tail) {
  return constTensorIR("gamma", {oc}) + constTensorIR("beta", {oc}) + constTensorIR("mean", {oc}) +
         "  %var0 : Tensor = aten::abs(%gamma)\n"
         "  %one : int = prim::Constant[value=1]()\n"
         "  %var : Tensor = aten::add(%var0, %one, %one)\n"
         "  %f : bool = prim::Constant[value=0]()\n"
         "  %t : bool = prim::Constant[value=1]()\n"
         "  %mom : float = prim::Constant[value=0.1]()\n"
         "  %eps : float = prim::Constant[value=1e-05]()\n"
         "  %bn : Tensor = aten::batch_norm(%y, %gamma, %beta, %mean, %var, %f, %mom, %eps, %t)\n" +
         tail;
}

TEST(OneDnnFusion, ConvBatchNormAddRelu) {
  // conv -> batch_norm (constant statistics, folded) -> add(residual) -> relu: one call.
  const std::string tail = batchNormTail(8,
                                         "  %sum : Tensor = aten::add(%bn, %r, %one)\n"
                                         "  %out : Tensor = aten::relu(%sum)\n");
  OpTester t(convIR(8, 4, 3, "[1, 1]", "[1, 1]", "[1, 1]", 1, tail, ", %r : Tensor"));
  t.inputs({at::randn({1, 4, 6, 6}), at::randn({1, 8, 6, 6})})
      .inputs({at::randn({2, 4, 5, 7}), at::randn({2, 8, 5, 7})})
      // A residual that broadcasts: oneDNN's fused add does not; the nested block runs.
      .inputs({at::randn({2, 4, 5, 7}), at::randn({1, 8, 1, 1})});
  expectPartition(std::move(t));
}

// oneDNN picks the weight's blocking per problem (on AVX2, this conv asks for Acdb16a at
// batch 1 and Acdb24a at batch 8): each format is packed once and shared by the shapes
// that ask for it. The folded weight is the partition's own, released after the first
// packing, so a second format is reordered from the first packed copy; either way the
// results must match, shape after shape and back.
TEST(OneDnnFusion, ConvWeightPackedOncePerFormat) {
  const std::string ir =
      convIR(128, 128, 3, "[1, 1]", "[1, 1]", "[1, 1]", 1, batchNormTail(128, "  %out : Tensor = aten::relu(%bn)\n"));
  expectPartition(std::move(OpTester(ir)
                                .inputs({at::randn({1, 128, 28, 28})})
                                .inputs({at::randn({8, 128, 28, 28})})
                                .inputs({at::randn({2, 128, 28, 28})})));
  auto m = Module::fromIR(ir, Options{}, "packed-formats");
  auto rt = m->createRuntime();
  for (int64_t n : {1, 8, 2, 1}) rt->run({at::randn({n, 128, 28, 28})});
  std::string detail;
  for (const NodeKernelInfo& k : m->kernelReport())
    if (k.op == kDelegateKind) detail = k.detail;
  RecordProperty("partition", detail);  // which blockings this CPU's oneDNN chose
  ASSERT_NE(detail.find("3 input shapes prepared so far"), std::string::npos) << detail;
  const bool one = detail.find(", 1 packed weight formats") != std::string::npos;
  const bool two = detail.find(", 2 packed weight formats") != std::string::npos;
  EXPECT_TRUE(one || two) << "three shapes, at most two blockings: " << detail;
}

// brisk without delegates on the same IR: the reference for tests that look inside the
// partition between runs.
c10::IValue ownKernels(const std::string& ir, const std::vector<c10::IValue>& in) {
  Options o;
  o.use_delegates = false;
  o.strict_inputs = false;
  return Module::fromIR(ir, o, "own-kernels")->run(in);
}

// conv1x1(x) [ic -> c] -> relu6 -> depthwise conv3x3 [c, stride dw_stride, padding 1]
// -> `tail` (reading %z, defining %out): MobileNet's expand and depthwise steps.
std::string pointwiseDepthwiseIR(int64_t ic, int64_t c, int64_t dw_stride, const std::string& tail,
                                 const std::string& extra_outputs = "") {
  const std::string s = "[" + std::to_string(dw_stride) + ", " + std::to_string(dw_stride) + "]";
  return "graph(%x : Tensor):\n" + constTensorIR("w", {c, ic, 1, 1}) + constTensorIR("b", {c}) +
         constTensorIR("w2", {c, 1, 3, 3}) + constTensorIR("b2", {c}) +
         "  %s1 : int[] = prim::Constant[value=[1, 1]]()\n"
         "  %p0 : int[] = prim::Constant[value=[0, 0]]()\n"
         "  %s2 : int[] = prim::Constant[value=" + s + "]()\n"
         "  %g1 : int = prim::Constant[value=1]()\n"
         "  %gc : int = prim::Constant[value=" + std::to_string(c) + "]()\n"
         "  %y : Tensor = aten::conv2d(%x, %w, %b, %s1, %p0, %s1, %g1)\n"
         "  %a : Tensor = aten::relu6(%y)\n"
         "  %z : Tensor = aten::conv2d(%a, %w2, %b2, %s2, %s1, %s1, %gc)\n" + tail +
         "  return (%out" + extra_outputs + ")\n";
}

size_t delegateCount(const Module& m) {
  size_t n = 0;
  for (const NodeKernelInfo& k : m.kernelReport()) n += k.op == kDelegateKind;
  return n;
}

// A 1x1 convolution whose result only a depthwise 3x3 reads is one partition: oneDNN's
// fused kernel where it has one for the shape (on AVX2: jit_1x1 at batch 8), else the
// two primitives through an intermediate. Both match brisk's own kernels, shape after
// shape, with a batch norm folded into either convolution.
TEST(OneDnnFusion, DepthwiseStepJoinsThePointwiseConv) {
  const std::string relu6 = "  %out : Tensor = aten::relu6(%z)\n";
  std::string bn_tail = batchNormTail(192, "  %out : Tensor = aten::relu6(%bn)\n");
  // batchNormTail reads %y: here the depthwise result %z is normalised.
  bn_tail.replace(bn_tail.find("batch_norm(%y"), 13, "batch_norm(%z");
  for (const std::string& tail : {relu6, bn_tail}) {
    const std::string ir = pointwiseDepthwiseIR(32, 192, 1, tail);
    Options o;
    o.strict_inputs = false;
    auto m = Module::fromIR(ir, o, "pointwise-depthwise");
    EXPECT_EQ(delegateCount(*m), 1u);
    auto rt = m->createRuntime();
    for (int64_t n : {1, 8, 2, 8}) {
      const std::vector<c10::IValue> in{at::randn({n, 32, 28, 28})};
      EXPECT_EQ(compareIValues(rt->run(in), ownKernels(ir, in), kTol), "") << "batch " << n;
    }
    const std::string detail = kernelDetail(*m, kDelegateKind);
    RecordProperty("partition", detail);  // which shapes this CPU's oneDNN fused
    EXPECT_NE(detail.find("depthwise 3x3 192->192 groups 192"), std::string::npos) << detail;
    EXPECT_NE(detail.find("3 input shapes prepared so far"), std::string::npos) << detail;
    // oneDNN 3.2 on AVX2 (measured on Zen 3): jit_1x1 with the depthwise step fused at
    // batch 8, its reference chaining (so two primitives here) at batches 1 and 2. Other
    // instruction sets choose their own kernels.
    const bool avx2_only = __builtin_cpu_supports("avx2") && !__builtin_cpu_supports("avx512f");
    const std::string fused = "depthwise step fused into the 1x1 kernel for ";
    EXPECT_NE(detail.find(avx2_only ? fused + "1 of them" : fused), std::string::npos) << detail;
    // An unbatched input is not the partition's: the nested block runs, on both weights
    // put back bit for bit (freed, as no batch norm was folded into them). (Batch norm
    // itself takes no unbatched input.)
    if (tail == relu6) {
      const std::vector<c10::IValue> unbatched{at::randn({32, 28, 28})};
      EXPECT_TRUE(bitEqual(rt->run(unbatched).toTensor(), ownKernels(ir, unbatched).toTensor()));
    }
    const std::vector<c10::IValue> again{at::randn({8, 32, 28, 28})};
    EXPECT_EQ(compareIValues(rt->run(again), ownKernels(ir, again), kTol), "");
  }
}

// Not joined: a strided depthwise conv (oneDNN 3.2 has no fused kernel for it here), a
// 1x1 result something else reads too, and the option turned off. Each still runs on
// oneDNN, as two partitions.
TEST(OneDnnFusion, DepthwiseStepStaysApart) {
  const std::string relu6 = "  %out : Tensor = aten::relu6(%z)\n";
  Options o;
  o.strict_inputs = false;
  Options off = o;
  off.plugin_options["onednn.fuse_depthwise"] = false;
  const struct {
    std::string ir;
    Options options;
  } cases[] = {
      {pointwiseDepthwiseIR(16, 48, 2, relu6), o},
      {pointwiseDepthwiseIR(16, 48, 1, relu6, ", %y"), o},
      {pointwiseDepthwiseIR(16, 48, 1, relu6), off},
  };
  for (const auto& c : cases) {
    auto m = Module::fromIR(c.ir, c.options, "pointwise-depthwise");
    EXPECT_EQ(delegateCount(*m), 2u) << c.ir;
    for (int64_t n : {1, 8}) {
      const std::vector<c10::IValue> in{at::randn({n, 16, 14, 14})};
      EXPECT_EQ(compareIValues(m->run(in), ownKernels(c.ir, in), kTol), "") << c.ir;
    }
  }
}

// conv 8->16 3x3 -> add(%r) -> relu, the residual an input: a call whose residual
// broadcasts is not the partition's, so the nested block runs.
std::string residualConvIR() {
  return convIR(16, 8, 3, "[1, 1]", "[1, 1]", "[1, 1]", 1,
                "  %one : int = prim::Constant[value=1]()\n"
                "  %sum : Tensor = aten::add(%y, %r, %one)\n"
                "  %out : Tensor = aten::relu(%sum)\n",
                ", %r : Tensor");
}

// A weight nothing but its partition reads loses its dense bytes once oneDNN's packed
// copy exists (the model holds it once, not twice), and gets them back, bit for bit,
// when a call the partition cannot serve (a broadcasting residual) runs the nested
// block; from then on they stay.
TEST(OneDnnFusion, ConvWeightFreedUntilTheNestedBlockNeedsIt) {
  const std::string ir = residualConvIR();
  Options o;
  o.strict_inputs = false;
  auto m = Module::fromIR(ir, o, "freed-weight");
  auto rt = m->createRuntime();
  const std::vector<c10::IValue> served{at::randn({2, 8, 10, 10}), at::randn({2, 16, 10, 10})};
  const std::vector<c10::IValue> nested{at::randn({2, 8, 10, 10}), at::randn({1, 16, 1, 1})};
  EXPECT_EQ(kernelDetail(*m, kDelegateKind).find("dense weight freed"), std::string::npos);
  EXPECT_EQ(compareIValues(rt->run(served), ownKernels(ir, served), kTol), "");
  EXPECT_NE(kernelDetail(*m, kDelegateKind).find("dense weight freed"), std::string::npos)
      << kernelDetail(*m, kDelegateKind);
  EXPECT_EQ(compareIValues(rt->run(nested), ownKernels(ir, nested), kTol), "");
  EXPECT_EQ(kernelDetail(*m, kDelegateKind).find("dense weight freed"), std::string::npos);
  // The nested block's result is brisk's own kernels' on the weight put back: the same
  // bits as a Module that never freed it.
  const at::Tensor back = rt->run(nested).toTensor();
  EXPECT_TRUE(bitEqual(back, ownKernels(ir, nested).toTensor()));
  EXPECT_EQ(compareIValues(rt->run(served), ownKernels(ir, served), kTol), "");
}

// Runtimes of one Module on several threads at once: first packings for two input
// shapes (two weight blockings on this CPU at batch 1 and 8), the nested block that puts
// the freed weight back, and served calls after it, all racing on one partition's
// packed weights. Every result must match brisk's own kernels; under --config=tsan this
// is the release/restore path's race check.
TEST(OneDnnFusion, FreedWeightRestoredWhileOtherRuntimesRun) {
  const std::string ir = residualConvIR();
  Options o;
  o.strict_inputs = false;
  const std::vector<std::vector<c10::IValue>> inputs{
      {at::randn({1, 8, 12, 12}), at::randn({1, 16, 12, 12})},
      {at::randn({8, 8, 12, 12}), at::randn({8, 16, 12, 12})},
      {at::randn({2, 8, 12, 12}), at::randn({1, 16, 1, 1})},  // broadcasting: the nested block
  };
  std::vector<c10::IValue> expected;
  for (const auto& in : inputs) expected.push_back(ownKernels(ir, in));
  constexpr int kThreads = 4, kRounds = 6;
  for (int round = 0; round < kRounds; ++round) {
    auto m = Module::fromIR(ir, o, "restore-race");
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        auto rt = m->createRuntime();
        // Each thread starts at another input, so first packings, the restore and served
        // calls overlap.
        for (int i = 0; i < 6 && errors[t].empty(); ++i) {
          const size_t k = static_cast<size_t>(t + i + round) % inputs.size();
          errors[t] = compareIValues(rt->run(inputs[k]), expected[k], kTol);
        }
      });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "round " << round << " thread " << t;
  }
}

// A weight two partitions read (a tied weight) is read outside each of them: neither
// frees it.
TEST(OneDnnFusion, SharedWeightIsNeverFreed) {
  const std::string ir = "graph(%x : Tensor):\n" + constTensorIR("w", {8, 8, 3, 3}) +
                         "  %none : NoneType = prim::Constant()\n"
                         "  %s : int[] = prim::Constant[value=[1, 1]]()\n"
                         "  %g : int = prim::Constant[value=1]()\n"
                         "  %c1 : Tensor = aten::conv2d(%x, %w, %none, %s, %s, %s, %g)\n"
                         "  %r1 : Tensor = aten::relu(%c1)\n"
                         "  %c2 : Tensor = aten::conv2d(%r1, %w, %none, %s, %s, %s, %g)\n"
                         "  %out : Tensor = aten::relu(%c2)\n"
                         "  return (%out)\n";
  auto m = Module::fromIR(ir, Options{}, "tied-weight");
  const std::vector<c10::IValue> in{at::randn({1, 8, 9, 9})};
  EXPECT_EQ(compareIValues(m->run(in), ownKernels(ir, in), kTol), "");
  size_t partitions = 0;
  for (const NodeKernelInfo& k : m->kernelReport()) {
    if (k.op != kDelegateKind) continue;
    ++partitions;
    EXPECT_EQ(k.detail.find("dense weight freed"), std::string::npos) << k.detail;
  }
  EXPECT_EQ(partitions, 2u);
}

// conv -> relu -> conv -> relu -> flatten: the first partition hands its result to the
// second in NHWC (no conversion between them); the second converts back to NCHW for
// the view. The outputs still match the interpreter.
TEST(OneDnnFusion, NhwcFlowsBetweenConvPartitions) {
  const std::string ir = "graph(%x : Tensor):\n" + constTensorIR("w1", {8, 4, 3, 3}) + constTensorIR("b1", {8}) +
                         constTensorIR("w2", {6, 8, 1, 1}) + constTensorIR("b2", {6}) +
                         "  %s : int[] = prim::Constant[value=[1, 1]]()\n"
                         "  %p : int[] = prim::Constant[value=[1, 1]]()\n"
                         "  %p0 : int[] = prim::Constant[value=[0, 0]]()\n"
                         "  %g : int = prim::Constant[value=1]()\n"
                         "  %c1 : Tensor = aten::conv2d(%x, %w1, %b1, %s, %p, %s, %g)\n"
                         "  %r1 : Tensor = aten::relu(%c1)\n"
                         "  %c2 : Tensor = aten::conv2d(%r1, %w2, %b2, %s, %p0, %s, %g)\n"
                         "  %r2 : Tensor = aten::relu(%c2)\n"
                         "  %start : int = prim::Constant[value=1]()\n"
                         "  %end : int = prim::Constant[value=-1]()\n"
                         "  %out : Tensor = aten::flatten(%r2, %start, %end)\n"
                         "  return (%out)\n";
  Options o;
  auto m = Module::fromIR(ir, o, "nhwc-flow");
  std::vector<std::string> details;
  for (const NodeKernelInfo& k : m->kernelReport())
    if (k.op == kDelegateKind) details.push_back(k.detail);
  ASSERT_EQ(details.size(), 2u);
  EXPECT_NE(details[0].find("output: nhwc"), std::string::npos) << details[0];
  EXPECT_EQ(details[0].find("nhwc -> nchw"), std::string::npos) << details[0];
  EXPECT_NE(details[1].find("output: nhwc -> nchw"), std::string::npos) << details[1];
  OpTester(ir).withDelegates().tolerance(kTol).inputs({at::randn({1, 4, 9, 9})}).inputs({at::randn({3, 4, 5, 6})}).run();
}

std::string linearIR(int64_t n, int64_t k, const std::string& tail, const std::string& params = "") {
  return "graph(%x : Tensor" + params + "):\n" + constTensorIR("w", {n, k}) + constTensorIR("b", {n}) +
         "  %y : Tensor = aten::linear(%x, %w, %b)\n" + tail + "  return (%out)\n";
}

TEST(OneDnnFusion, LinearChains) {
  // 16 and 33 rows run on oneDNN; 4 rows go back to brisk's small GEMM (linear_min_rows).
  for (const char* tail : {"  %out : Tensor = aten::relu(%y)\n",
                           "  %a : str = prim::Constant[value=\"tanh\"]()\n  %out : Tensor = aten::gelu(%y, %a)\n",
                           "  %out : Tensor = aten::neg(%y)\n"}) {
    SCOPED_TRACE(tail);
    expectPartition(std::move(OpTester(linearIR(24, 40, tail))
                                  .inputs({at::randn({16, 40})})
                                  .inputs({at::randn({4, 40})})
                                  .inputs({at::randn({3, 11, 40})})));
  }
  const std::string add = "  %one : int = prim::Constant[value=1]()\n  %out : Tensor = aten::add(%y, %r, %one)\n";
  expectPartition(std::move(OpTester(linearIR(24, 40, add, ", %r : Tensor"))
                                .inputs({at::randn({16, 40}), at::randn({16, 24})})
                                .inputs({at::randn({16, 40}), at::randn({24})})));  // broadcast: nested block
}

TEST(OneDnnFusion, CoreIrMatmuls) {
  // addmm(b, x, W^T) and mm(x, W^T) as torch.export's core IR writes linear layers.
  expectPartition(std::move(OpTester("graph(%x : Tensor):\n" + constTensorIR("wt", {40, 24}) +
                                     constTensorIR("b", {24}) +
                                     "  %one : int = prim::Constant[value=1]()\n"
                                     "  %out : Tensor = aten::addmm(%b, %x, %wt, %one, %one)\n"
                                     "  return (%out)\n")
                                .inputs({at::randn({12, 40})})
                                .inputs({at::randn({2, 40})})));
  expectPartition(std::move(OpTester("graph(%x : Tensor):\n" + constTensorIR("wt", {40, 24}) +
                                     "  %y : Tensor = aten::mm(%x, %wt)\n"
                                     "  %out : Tensor = aten::relu(%y)\n"
                                     "  return (%out)\n")
                                .inputs({at::randn({12, 40})})));
}

TEST(OneDnnFusion, WhatIsNotClaimed) {
  // A weight that is an input (not a constant) and a transposed convolution stay on
  // brisk's kernels.
  OpTester(
      "graph(%x : Tensor, %w : Tensor):\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %y : Tensor = aten::linear(%x, %w, %none)\n"
      "  %out : Tensor = aten::relu(%y)\n"
      "  return (%out)\n")
      .withDelegates()
      .inputs({at::randn({16, 8}), at::randn({4, 8})})
      .expectKernel("aten::linear", KernelKind::kOutVariant)
      .run();
}

// A call under onednn.linear_min_macs multiply-adds runs the nested block (brisk's
// kernels): oneDNN never packs a weight for it. At 0 the same call takes oneDNN, with
// the same result within the GEMMs' rounding.
TEST(OneDnnFusion, SmallLinearCallsStayOnBrisksKernels) {
  const std::string ir = linearIR(24, 40, "  %out : Tensor = aten::relu(%y)\n");
  const at::Tensor x = at::randn({16, 40});
  at::Tensor first;
  for (int64_t min_macs : {int64_t{1} << 20, int64_t{0}}) {
    SCOPED_TRACE(min_macs);
    Options o;
    o.plugin_options["onednn.linear"] = true;
    if (min_macs == 0) o.plugin_options["onednn.linear_min_macs"] = min_macs;
    auto m = Module::fromIR(ir, o, "small-linear");
    const at::Tensor got = m->run({x}).toTensor();
    if (first.defined())
      EXPECT_TRUE(at::allclose(got, first, 1e-5, 1e-5));
    else
      first = got;
    std::string detail;
    for (const NodeKernelInfo& k : m->kernelReport())
      if (k.op == kDelegateKind) detail = k.detail;
    const std::string want = min_macs ? "0 row counts prepared so far" : "1 row counts prepared so far";
    EXPECT_NE(detail.find(want), std::string::npos) << detail;
  }
}

// A linear partition on an input with more than two dimensions: its output stays in the
// memory plan (the op used to return a reshaped view of its matrix result, whose shared
// storage made the plan drop the output after the first run, reallocating it each run).
TEST(OneDnnFusion, LinearOnBatchedInputStaysPlanned) {
  Options o;
  o.plugin_options["onednn.linear"] = true;
  o.plugin_options["onednn.linear_min_macs"] = int64_t{0};
  // neg stays outside the partition, so the linear output is an intermediate the plan places.
  auto m = Module::fromIR(linearIR(24, 40, "  %out : Tensor = aten::neg(%y)\n"), o, "batched-linear");
  const at::Tensor x = at::randn({3, 11, 40});
  at::Tensor first;
  for (int run = 0; run < 3; ++run) {
    const at::Tensor y = m->run({x}).toTensor();
    EXPECT_EQ(y.sizes(), (std::vector<int64_t>{3, 11, 24}));
    if (run == 0) first = y.clone();
    else EXPECT_TRUE(at::equal(y, first));
  }
  EXPECT_EQ(m->stats().memory.evictions, 0u);
  EXPECT_GE(m->stats().managed_values, 1u);
}

TEST(OneDnnFusion, OptionOfTheWrongTypeIsALoadError) {
  const std::string ir = convIR(8, 3, 3, "[1, 1]", "[1, 1]", "[1, 1]", 1, "  %out : Tensor = aten::relu(%y)\n");
  for (const PluginOptionValue& bad : {PluginOptionValue(int64_t{3}), PluginOptionValue(std::string("maybe"))}) {
    Options o;
    o.plugin_options["onednn.linear"] = bad;
    const std::string msg = errorOf([&] { Module::fromIR(ir, o, "bad-option"); });
    EXPECT_NE(msg.find("bad-option"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'onednn.linear' of plugin onednn expects a bool"), std::string::npos) << msg;
  }
  Options o;
  o.plugin_options["onednn.linear_min_rows"] = std::string("9.5");
  EXPECT_NE(errorOf([&] { Module::fromIR(ir, o, "bad-option"); }).find("expects a int"), std::string::npos);
}

}  // namespace
}  // namespace brisk::testing
