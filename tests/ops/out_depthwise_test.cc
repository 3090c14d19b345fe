// Depthwise convolution (ops_cpu/simd/depthwise_nchw.h via ops_cpu/out_variant/conv.cc) against
// the interpreter. On contiguous float NCHW inputs the direct kernel must give ATen's
// (oneDNN's) values bit for bit, so every comparison here is exact: MobileNet's
// depthwise layers feed 50 more layers, and the zoo tests compare whole models at
// rtol 1e-5. Shapes cover the vector paths (stride 1 and 2, 3x3 and other kernels), the
// scalar borders and tails, padding wider than the kernel, dilation, and the inputs the
// direct kernel leaves to ATen (channels-last, double, channel multipliers, 1x1).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

std::string ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

struct Geometry {
  int64_t channels;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool bias = true;
  int64_t multiplier = 1;  // out channels per group
};

// conv2d with a constant (frozen) weight and bias, as freezing leaves MobileNet's.
std::string depthwiseIR(const Geometry& g) {
  std::string ir =
      "graph(%x : Tensor):\n" + constTensorIR("w", {g.channels * g.multiplier, 1, g.kernel[0], g.kernel[1]});
  if (g.bias) {
    ir += constTensorIR("b", {g.channels * g.multiplier});
  } else {
    ir += "  %b : NoneType = prim::Constant()\n";
  }
  ir += "  %s : int[] = prim::Constant[value=" + ints(g.stride) + "]()\n" +
        "  %p : int[] = prim::Constant[value=" + ints(g.padding) + "]()\n" +
        "  %d : int[] = prim::Constant[value=" + ints(g.dilation) + "]()\n" +
        "  %g : int = prim::Constant[value=" + std::to_string(g.channels) + "]()\n" +
        "  %y : Tensor = aten::conv2d(%x, %w, %b, %s, %p, %d, %g)\n"
        "  return (%y)\n";
  return ir;
}

void expectExact(const Geometry& g, const std::vector<std::vector<int64_t>>& shapes) {
  OpTester t(depthwiseIR(g));
  for (const auto& s : shapes) t.inputs({at::randn(s)});
  t.tolerance(Tolerance{0, 0, 0}).expectKernel("aten::conv2d", kOut).run();
}

TEST(OutDepthwise, MobileNetLayers) {
  // 3x3, pad 1, stride 1 and 2, channel counts of MobileNetV2 (and batch > 1).
  expectExact({32, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, {{1, 32, 56, 56}, {2, 32, 28, 28}});
  expectExact({96, {3, 3}, {2, 2}, {1, 1}, {1, 1}}, {{1, 96, 56, 56}, {2, 96, 14, 14}});
  expectExact({144, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, {{1, 144, 7, 7}, {3, 144, 9, 9}});
}

TEST(OutDepthwise, TwoIntraOpThreadsSplitPlanes) {
  // With intra-op threads the planes are split across at::parallel_for tasks.
  const int before = at::get_num_threads();
  at::set_num_threads(2);
  expectExact({32, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, {{2, 32, 28, 28}, {1, 32, 9, 9}});
  expectExact({40, {3, 3}, {2, 2}, {1, 1}, {1, 1}}, {{3, 40, 30, 30}});
  at::set_num_threads(before);
}

TEST(OutDepthwise, OddSizesAndChannelCounts) {
  // Widths that leave vector tails and scalar borders on both sides; channel counts
  // that are no multiple of oneDNN's block.
  expectExact({17, {3, 3}, {1, 1}, {1, 1}, {1, 1}}, {{1, 17, 13, 45}, {2, 17, 5, 3}, {1, 17, 1, 1}});
  expectExact({17, {3, 3}, {2, 2}, {1, 1}, {1, 1}}, {{1, 17, 15, 47}, {2, 17, 2, 2}, {1, 17, 33, 9}});
  expectExact({5, {3, 3}, {2, 2}, {0, 0}, {1, 1}}, {{1, 5, 40, 41}, {1, 5, 3, 3}});
}

TEST(OutDepthwise, NoBias) {
  expectExact({24, {3, 3}, {1, 1}, {1, 1}, {1, 1}, /*bias=*/false}, {{2, 24, 20, 37}});
  expectExact({24, {3, 3}, {2, 2}, {1, 1}, {1, 1}, /*bias=*/false}, {{2, 24, 21, 38}});
}

TEST(OutDepthwise, OtherKernelsStridesDilations) {
  expectExact({8, {5, 5}, {1, 1}, {2, 2}, {1, 1}}, {{1, 8, 30, 50}, {2, 8, 6, 6}});
  expectExact({8, {5, 5}, {2, 2}, {2, 2}, {1, 1}}, {{1, 8, 31, 51}});
  expectExact({8, {3, 3}, {1, 1}, {2, 2}, {2, 2}}, {{1, 8, 20, 44}});
  expectExact({8, {3, 1}, {1, 1}, {1, 0}, {1, 1}}, {{1, 8, 12, 40}});
  expectExact({8, {1, 3}, {2, 1}, {0, 1}, {1, 1}}, {{1, 8, 12, 40}});
  expectExact({8, {3, 3}, {1, 2}, {0, 1}, {1, 1}}, {{1, 8, 19, 53}});
  expectExact({8, {3, 3}, {3, 3}, {1, 1}, {1, 1}}, {{1, 8, 25, 70}});  // stride 3: scalar
  expectExact({8, {7, 7}, {1, 1}, {3, 3}, {1, 1}}, {{1, 8, 9, 40}});
}

TEST(OutDepthwise, PaddingWiderThanHalfTheKernel) {
  // Windows that reach two columns into the padding: still oneDNN's depthwise kernel.
  expectExact({6, {3, 3}, {1, 1}, {2, 2}, {1, 1}}, {{1, 6, 5, 20}, {1, 6, 1, 1}});
  expectExact({6, {3, 3}, {2, 2}, {2, 2}, {1, 1}}, {{2, 6, 7, 30}});
  // Windows wholly in the padding: oneDNN takes another implementation (another
  // summation order), and so does brisk.
  expectExact({6, {3, 3}, {1, 1}, {3, 3}, {1, 1}}, {{1, 6, 5, 20}});
  expectExact({6, {3, 3}, {2, 2}, {2, 4}, {1, 1}}, {{2, 6, 7, 30}});
}

// 16 channels, 3x3, stride 1, pad 1; weight and bias are inputs.
const char* kDepthwiseInputsIR = R"IR(
graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %s : int[] = prim::Constant[value=[1, 1]]()
  %p : int[] = prim::Constant[value=[1, 1]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %g : int = prim::Constant[value=16]()
  %y : Tensor = aten::conv2d(%x, %w, %b, %s, %p, %d, %g)
  return (%y)
)IR";

TEST(OutDepthwise, WeightAndBiasAsInputs) {
  OpTester(kDepthwiseInputsIR)
      .inputs({at::randn({1, 16, 20, 40}), at::randn({16, 1, 3, 3}), at::randn({16})})
      .inputs({at::randn({2, 16, 9, 9}), at::randn({16, 1, 3, 3}), at::randn({16})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::conv2d", kOut)
      .run();
}

// aten::_convolution (stride 2, padding 1, dilation 1, output padding 0) over
// `channels` channels with a frozen depthwise 3x3 weight and bias; each int[] argument
// has one value per spatial dimension, or one value for both.
std::string convolutionUnderscoreIR(int64_t channels, bool one_value_lists) {
  auto list = [one_value_lists](int64_t v) { return one_value_lists ? ints({v}) : ints({v, v}); };
  return "graph(%x : Tensor):\n" + constTensorIR("w", {channels, 1, 3, 3}) + constTensorIR("b", {channels}) +
         "  %s : int[] = prim::Constant[value=" + list(2) + "]()\n" + "  %p : int[] = prim::Constant[value=" + list(1) +
         "]()\n" + "  %d : int[] = prim::Constant[value=" + list(1) + "]()\n" +
         "  %op : int[] = prim::Constant[value=" + list(0) + "]()\n" +
         "  %f : bool = prim::Constant[value=0]()\n"
         "  %t : bool = prim::Constant[value=1]()\n"
         "  %g : int = prim::Constant[value=" +
         std::to_string(channels) +
         "]()\n"
         "  %y : Tensor = aten::_convolution(%x, %w, %b, %s, %p, %d, %f, %op, %g, %f, %f, %t, %t)\n"
         "  return (%y)\n";
}

TEST(OutDepthwise, ConvolutionUnderscore) {
  OpTester(convolutionUnderscoreIR(12, /*one_value_lists=*/false))
      .inputs({at::randn({1, 12, 33, 35})})
      .inputs({at::randn({2, 12, 8, 8})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::_convolution", kOut)
      .run();
}

TEST(OutDepthwise, ConvolutionUnderscoreOneValueForBothDimensions) {
  // _convolution expands one-element stride/padding/dilation lists itself.
  OpTester(convolutionUnderscoreIR(6, /*one_value_lists=*/true))
      .inputs({at::randn({1, 6, 17, 19})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::_convolution", kOut)
      .run();
}

TEST(OutDepthwise, InputsLeftToATen) {
  const Geometry g{16, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
  // Channels-last inputs; double.
  OpTester(depthwiseIR(g))
      .inputs({at::randn({2, 16, 10, 12}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({1, 16, 7, 30}).contiguous(at::MemoryFormat::ChannelsLast)})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::conv2d", kOut)
      .run();
  OpTester(kDepthwiseInputsIR)
      .inputs({at::randn({1, 16, 10, 12}, at::kDouble), at::randn({16, 1, 3, 3}, at::kDouble),
               at::randn({16}, at::kDouble)})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::conv2d", kOut)
      .run();
  // Two filters per channel; 1x1 depthwise (ATen's heuristics skip oneDNN there).
  expectExact({8, {3, 3}, {1, 1}, {1, 1}, {1, 1}, true, /*multiplier=*/2}, {{1, 8, 10, 12}});
  expectExact({8, {1, 1}, {1, 1}, {0, 0}, {1, 1}}, {{1, 8, 10, 12}});
}

TEST(OutDepthwise, InputTooSmallIsATenError) {
  // A 3x3 filter without padding over a 2x2 input: ATen's error, not a crash.
  EXPECT_ANY_THROW(OpTester(depthwiseIR({4, {3, 3}, {1, 1}, {0, 0}, {1, 1}})).inputs({at::randn({1, 4, 2, 2})}).run());
}

}  // namespace
}  // namespace brisk::testing
