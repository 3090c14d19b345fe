// Which path ops_cpu's conv kernel takes (ops_cpu/out_variant/conv.cc), observed through the
// memory plan: ATen's (oneDNN's) result is an allocation the kernel captures into the
// slab; the direct depthwise kernel and the per-sample path write the planned output
// themselves (nothing captured). Every path gives the interpreter's bits.
// - Depthwise, by default (BRISK_DEPTHWISE_DIRECT unset = auto): the large convs run the
//   direct kernel, where it beats oneDNN; small ones stay with oneDNN.
//   (out_depthwise_test runs with BRISK_DEPTHWISE_DIRECT=always, to check the direct
//   kernel on every geometry.)
// - Other convs with a large output and several samples run one sample at a time, so
//   oneDNN's blocked copy of the output exists for one sample only.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "tests/ops/op_tester.h"
#include "tools/ivalue_compare.h"

namespace brisk::testing {
namespace {

// A conv with a frozen weight and bias, as in a loaded model (`weight` shape [out,
// in/groups, k, k], padding k/2), and a relu, so the conv's output is an intermediate
// the plan manages.
std::string convIR(const std::vector<int64_t>& weight, int64_t stride, int64_t groups) {
  const std::string st = std::to_string(stride), pad = std::to_string(weight[2] / 2);
  return "graph(%x : Tensor):\n" + constTensorIR("w", weight) + constTensorIR("b", {weight[0]}) +
         "  %s : int[] = prim::Constant[value=[" + st + ", " + st + "]]()\n" +
         "  %p : int[] = prim::Constant[value=[" + pad + ", " + pad + "]]()\n" +
         "  %d : int[] = prim::Constant[value=[1, 1]]()\n" +
         "  %g : int = prim::Constant[value=" + std::to_string(groups) + "]()\n" +
         "  %y : Tensor = aten::conv2d(%x, %w, %b, %s, %p, %d, %g)\n"
         "  %z : Tensor = aten::relu(%y)\n"
         "  return (%z)\n";
}

// The constants constTensorIR builds: sin(arange(numel)) reshaped.
at::Tensor constTensor(const std::vector<int64_t>& shape) {
  return at::sin(at::arange(c10::multiply_integers(shape))).reshape(shape);
}

// Runs the conv three times (plan learned, then served) and returns how many conv
// outputs were captured from an allocation; checks ATen's bits (the interpreter's
// aten::conv2d call) each time.
size_t capturedConvOutputs(const std::vector<int64_t>& shape, const std::vector<int64_t>& weight, int64_t stride,
                           int64_t groups) {
  Options o;
  o.memory_planning = true;
  o.inplace_reuse = false;  // relu would write into the conv's output, making it the result
  o.use_delegates = false;  // ops_cpu's conv policy, not the onednn partition
  auto m = Module::fromIR(convIR(weight, stride, groups), o);
  auto rt = m->createRuntime();
  at::Tensor x = at::randn(shape);
  const int64_t pad = weight[2] / 2;
  const at::Tensor expected = at::relu(
      at::conv2d(x, constTensor(weight), constTensor({weight[0]}), {stride, stride}, {pad, pad}, {1, 1}, groups));
  for (int run = 0; run < 3; ++run) EXPECT_EQ(compareIValues(rt->run({x}), expected, Tolerance{0, 0, 0}), "");
  return rt->memoryStats().captured_outputs;
}

// 3x3 depthwise, stride 1.
size_t capturedDepthwise(const std::vector<int64_t>& shape) {
  return capturedConvOutputs(shape, {shape[1], 1, 3, 3}, 1, shape[1]);
}

TEST(OutConvPolicy, DepthwiseSmallPlanesStayWithOneDnn) {
  EXPECT_EQ(capturedDepthwise({1, 144, 14, 14}), 1u);
  EXPECT_EQ(capturedDepthwise({8, 192, 28, 28}), 1u);
  // A large plane but a small input: even with oneDNN, so oneDNN.
  EXPECT_EQ(capturedDepthwise({1, 32, 112, 112}), 1u);
}

TEST(OutConvPolicy, DepthwiseLargePlanesRunDirect) {
  EXPECT_EQ(capturedDepthwise({1, 96, 112, 112}), 0u);
  EXPECT_EQ(capturedDepthwise({8, 144, 56, 56}), 0u);
}

// ResNet's stem at batch 8 (a 25.7 MB output): one sample at a time; the same conv at
// batch 1, or a small output at batch 8, stays one call.
TEST(OutConvPolicy, LargeBatchedOutputsRunPerSample) {
  EXPECT_EQ(capturedConvOutputs({8, 3, 224, 224}, {64, 3, 7, 7}, 2, 1), 0u);
  EXPECT_EQ(capturedConvOutputs({2, 16, 112, 112}, {256, 16, 3, 3}, 1, 1), 0u);
  EXPECT_EQ(capturedConvOutputs({1, 3, 224, 224}, {64, 3, 7, 7}, 2, 1), 1u);
  EXPECT_EQ(capturedConvOutputs({8, 16, 28, 28}, {32, 16, 3, 3}, 1, 1), 1u);
}

// A zero stride on a conv large enough for the per-sample path: ATen's error, as the
// interpreter raises it (not a division by zero in the path's size arithmetic).
TEST(OutConvPolicy, PerSamplePathLeavesInvalidArgumentsToATen) {
  auto m = Module::fromIR(R"IR(
graph(%x : Tensor, %w : Tensor):
  %none : NoneType = prim::Constant()
  %s : int[] = prim::Constant[value=[0, 1]]()
  %p : int[] = prim::Constant[value=[1, 1]]()
  %g : int = prim::Constant[value=1]()
  %y : Tensor = aten::conv2d(%x, %w, %none, %s, %p, %p, %g)
  return (%y))IR");
  auto rt = m->createRuntime();
  try {
    rt->run({at::randn({2, 16, 112, 112}), at::randn({256, 16, 3, 3})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("non-positive stride"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace brisk::testing
