// Which depthwise convs the direct NCHW kernel takes by default (ops_cpu/out/conv.cc,
// BRISK_DEPTHWISE_DIRECT unset = auto): the large ones, where it beats oneDNN; small
// ones stay with oneDNN. Observed through the memory plan: oneDNN's result is an
// allocation the conv kernel captures into the slab, the direct kernel's is written in
// place (nothing captured). Both give the interpreter's bits. (out_depthwise_test runs
// with BRISK_DEPTHWISE_DIRECT=always, to check the direct kernel on every geometry.)
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/module.h"
#include "core/runtime.h"
#include "tests/ops/op_tester.h"
#include "tools/ivalue_compare.h"

namespace brisk::testing {
namespace {

// 3x3 depthwise conv (stride, padding, dilation 1) with a frozen weight and bias, as in a
// loaded model, and a relu, so the conv's output is an intermediate the plan manages.
std::string depthwiseIR(int64_t channels) {
  return "graph(%x : Tensor):\n" + constTensorIR("w", {channels, 1, 3, 3}) + constTensorIR("b", {channels}) +
         "  %s : int[] = prim::Constant[value=[1, 1]]()\n"
         "  %g : int = prim::Constant[value=" +
         std::to_string(channels) +
         "]()\n"
         "  %y : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %g)\n"
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
size_t capturedConvOutputs(const std::vector<int64_t>& shape) {
  const int64_t c = shape[1];
  Options o;
  o.memory_planning = true;
  o.inplace_reuse = false;  // relu would write into the conv's output, making it the result
  auto m = Module::fromIR(depthwiseIR(c), o);
  auto rt = m->createRuntime();
  at::Tensor x = at::randn(shape);
  const at::Tensor expected =
      at::relu(at::conv2d(x, constTensor({c, 1, 3, 3}), constTensor({c}), {1, 1}, {1, 1}, {1, 1}, c));
  for (int run = 0; run < 3; ++run) EXPECT_EQ(compareIValues(rt->run({x}), expected, Tolerance{0, 0, 0}), "");
  return rt->memoryStats().captured_outputs;
}

TEST(OutDepthwisePolicy, SmallPlanesStayWithOneDnn) {
  EXPECT_EQ(capturedConvOutputs({1, 144, 14, 14}), 1u);
  EXPECT_EQ(capturedConvOutputs({8, 192, 28, 28}), 1u);
  // A large plane but a small input: even with oneDNN, so oneDNN.
  EXPECT_EQ(capturedConvOutputs({1, 32, 112, 112}), 1u);
}

TEST(OutDepthwisePolicy, LargePlanesRunDirect) {
  EXPECT_EQ(capturedConvOutputs({1, 96, 112, 112}), 0u);
  EXPECT_EQ(capturedConvOutputs({8, 144, 56, 56}), 0u);
}

}  // namespace
}  // namespace brisk::testing
