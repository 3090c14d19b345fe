// Out-variant kernels of ops_cpu/out_variant/conv_linear.cc against the interpreter.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/executor/module.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;
// conv has no real out form in libtorch; with memory planning (the default) its output
// is retained and served from the slab (OutputCapture, ops_cpu/out_variant/conv.cc), so the
// kernel reports kOutVariant.
constexpr KernelKind kDirect = KernelKind::kOutVariant;

const char* kConvIR = R"IR(
graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %s : int[] = prim::Constant[value=[1, 1]]()
  %p : int[] = prim::Constant[value=[1, 1]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %g : int = prim::Constant[value=1]()
  %y : Tensor = aten::conv2d(%x, %w, %b, %s, %p, %d, %g)
  return (%y)
)IR";

TEST(OutConvLinear, Conv2d) {
  at::Tensor w = at::randn({8, 3, 3, 3}), b = at::randn({8});
  OpTester(kConvIR)
      .inputs({at::randn({1, 3, 8, 8}), w, b})
      .inputs({at::randn({2, 3, 16, 12}), w, b})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::conv2d", kDirect)
      .run();
}

TEST(OutConvLinear, Conv2dChannelsLast) {
  at::Tensor w = at::randn({8, 3, 3, 3}), b = at::randn({8});
  OpTester(kConvIR)
      .inputs({at::randn({1, 3, 8, 8}).contiguous(at::MemoryFormat::ChannelsLast), w, b})
      .inputs({at::randn({2, 3, 16, 12}).contiguous(at::MemoryFormat::ChannelsLast), w, b})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::conv2d", kDirect)
      .run();
}

TEST(OutConvLinear, Conv2dGroupedStridedConstWeightNoBias) {
  OpTester("graph(%x : Tensor):\n" + constTensorIR("w", {8, 2, 3, 3}) +
           "  %nob : NoneType = prim::Constant()\n"
           "  %s : int[] = prim::Constant[value=[2, 2]]()\n"
           "  %p : int[] = prim::Constant[value=[0, 1]]()\n"
           "  %d : int[] = prim::Constant[value=[1, 1]]()\n"
           "  %g : int = prim::Constant[value=4]()\n"
           "  %y : Tensor = aten::conv2d(%x, %w, %nob, %s, %p, %d, %g)\n"
           "  return (%y)\n")
      .inputs({at::randn({1, 8, 9, 9})})
      .inputs({at::randn({3, 8, 15, 11})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::conv2d", kDirect)
      .run();
}

TEST(OutConvLinear, ConvolutionUnderscore) {
  at::Tensor w = at::randn({4, 3, 3, 3}), b = at::randn({4});
  OpTester(R"IR(
graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %s : int[] = prim::Constant[value=[1, 1]]()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %op : int[] = prim::Constant[value=[0, 0]]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %g : int = prim::Constant[value=1]()
  %y : Tensor = aten::_convolution(%x, %w, %b, %s, %p, %d, %f, %op, %g, %f, %f, %t, %t)
  return (%y)
)IR")
      .inputs({at::randn({1, 3, 6, 6}), w, b})
      .inputs({at::randn({2, 3, 10, 7}), w, b})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::_convolution", kDirect)
      .run();
}

TEST(OutConvLinear, LinearConstWeight) {
  OpTester("graph(%x : Tensor):\n" + constTensorIR("w", {6, 4}) + constTensorIR("b", {6}) +
           "  %y : Tensor = aten::linear(%x, %w, %b)\n"
           "  return (%y)\n")
      .inputs({at::randn({1, 4})})
      .inputs({at::randn({33, 4})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::linear", kOut)
      .run();
}

TEST(OutConvLinear, LinearConstWeightNoBias3d) {
  OpTester("graph(%x : Tensor):\n" + constTensorIR("w", {6, 4}) +
           "  %nob : NoneType = prim::Constant()\n"
           "  %y : Tensor = aten::linear(%x, %w, %nob)\n"
           "  return (%y)\n")
      .inputs({at::randn({1, 2, 4})})
      .inputs({at::randn({3, 5, 4})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::linear", kOut)
      .run();
}

TEST(OutConvLinear, LinearConstWeight3dAndNonContiguous) {
  OpTester("graph(%x : Tensor):\n" + constTensorIR("w", {6, 4}) + constTensorIR("b", {6}) +
           "  %y : Tensor = aten::linear(%x, %w, %b)\n"
           "  return (%y)\n")
      .inputs({at::randn({2, 3, 4})})
      .inputs({at::randn({4, 7, 5}).transpose(0, 2).slice(2, 0, 4)})  // [5, 7, 4], non-contiguous
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::linear", kOut)
      .run();
}

Options exactBlas() {
  Options o;
  o.plugin_options["ops_cpu.small_gemm"] = false;
  return o;
}

// With small_gemm off, frozen fp32 weights run as the BLAS call ATen's addmm makes, with
// the same operands (the weight as stored): the results must be bit-identical to the
// interpreter's linear -- on any CPU, since both make one and the same sgemm_ call -- for
// one row (batch 1) and for many, with and without bias, 2-D and N-D.
TEST(OutConvLinear, LinearFrozenWeightBitExact) {
  OpTester("graph(%x : Tensor):\n" + constTensorIR("w", {96, 80}) + constTensorIR("b", {96}) +
           "  %y : Tensor = aten::linear(%x, %w, %b)\n"
           "  return (%y)\n")
      .inputs({at::randn({1, 80})})
      .inputs({at::randn({37, 80})})
      .tolerance(Tolerance{0, 0, 0})
      .options(exactBlas())
      .expectKernel("aten::linear", kOut)
      .run();
  OpTester("graph(%x : Tensor):\n" + constTensorIR("w", {96, 80}) +
           "  %nob : NoneType = prim::Constant()\n"
           "  %y : Tensor = aten::linear(%x, %w, %nob)\n"
           "  return (%y)\n")
      .inputs({at::randn({1, 1, 80})})
      .inputs({at::randn({3, 5, 80})})
      .tolerance(Tolerance{0, 0, 0})
      .options(exactBlas())
      .expectKernel("aten::linear", kOut)
      .run();
}

// With small_gemm off, one output feature (N == 1: ATen uses another GEMM orientation)
// and non-contiguous inputs take at::cpu::addmm_out; still bit-identical.
TEST(OutConvLinear, LinearFrozenWeightOtherLayoutsBitExact) {
  OpTester("graph(%x : Tensor):\n" + constTensorIR("w", {1, 64}) + constTensorIR("b", {1}) +
           "  %y : Tensor = aten::linear(%x, %w, %b)\n"
           "  return (%y)\n")
      .inputs({at::randn({1, 64})})
      .inputs({at::randn({9, 64})})
      .tolerance(Tolerance{0, 0, 0})
      .options(exactBlas())
      .expectKernel("aten::linear", kOut)
      .run();
  OpTester("graph(%x : Tensor):\n" + constTensorIR("w", {24, 16}) + constTensorIR("b", {24}) +
           "  %y : Tensor = aten::linear(%x, %w, %b)\n"
           "  return (%y)\n")
      .inputs({at::randn({16, 2}).t()})
      .inputs({at::randn({16, 11}).t()})
      .tolerance(Tolerance{0, 0, 0})
      .options(exactBlas())
      .expectKernel("aten::linear", kOut)
      .run();
}

// --- linear at small batch: brisk's packed kernel (ops_cpu/simd/small_gemm.h) -----------

const char* kSmallLinearIR = "  %y : Tensor = aten::linear(%x, %w, %b)\n  return (%y)\n";

std::string smallLinearIR(int64_t n, int64_t k, bool bias) {
  return "graph(%x : Tensor):\n" + constTensorIR("w", {n, k}) +
         (bias ? constTensorIR("b", {n}) : std::string("  %b : NoneType = prim::Constant()\n")) + kSmallLinearIR;
}

// Inputs of several ranks in one Module.
Options anyRank() {
  Options o;
  o.strict_inputs = false;
  return o;
}

// Default options: inputs of up to 8 rows (N-D inputs count every leading dim) run the
// packed kernel, bit for bit its documented order; 9 rows and more take ATen's addmm,
// bit-identical to the interpreter's linear.
TEST(OutConvLinear, LinearSmallBatchRunsThePackedKernel) {
  for (bool bias : {true, false}) {
    SCOPED_TRACE(bias ? "bias" : "no bias");
    auto m = Module::fromIR(smallLinearIR(70, 80, bias), anyRank(), "small-linear");
    EXPECT_NE(kernelDetail(*m, "aten::linear").find("small_gemm"), std::string::npos);
    const at::Tensor w = constTensorValue({70, 80});
    const at::Tensor b = bias ? constTensorValue({70}) : at::Tensor();
    for (std::vector<int64_t> shape : {std::vector<int64_t>{1, 80}, {3, 80}, {8, 80}, {2, 4, 80}, {1, 1, 80}, {80}}) {
      at::Tensor x = at::randn(shape);
      at::Tensor y = m->run({x}).toTensor();
      EXPECT_TRUE(bitEqual(y, smallGemmReference(x, w, b))) << "rows " << x.numel() / 80;
    }
    for (std::vector<int64_t> shape : {std::vector<int64_t>{9, 80}, {37, 80}, {3, 5, 80}}) {
      at::Tensor x = at::randn(shape);
      at::Tensor y = m->run({x}).toTensor();
      EXPECT_TRUE(bitEqual(y, at::linear(x, w, b.defined() ? c10::optional<at::Tensor>(b) : c10::nullopt)))
          << "rows " << x.numel() / 80;
    }
  }
}

// Against the interpreter (fp32 tolerance scaled to the outputs), repeated runs and
// shapes that grow and shrink: one output feature (deepandwide's head), widths across
// vector, block and panel edges, with and without bias, non-contiguous inputs (ATen).
TEST(OutConvLinear, LinearSmallBatchMatchesInterpreter) {
  for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 64}, {7, 5}, {33, 17}, {130, 40}}) {
    for (bool bias : {true, false}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k) + (bias ? " bias" : ""));
      OpTester(smallLinearIR(n, k, bias))
          .inputs({at::randn({1, k})})
          .inputs({at::randn({5, k})})
          .inputs({at::randn({2, 3, k})})
          .inputs({at::randn({k, 4}).t()})
          .inputs({at::randn({20, k})})
          .tolerance(Tolerance{1e-5, 1e-6, 1e-6})
          .options(anyRank())
          .expectKernel("aten::linear", kOut)
          .run();
    }
  }
}

// Intra-op threads split the weight's panels; the bits do not change.
TEST(OutConvLinear, LinearSmallBatchThreadsGiveTheSameBits) {
  const int before = at::get_num_threads();
  auto m = Module::fromIR(smallLinearIR(300, 200, true), Options{}, "small-linear");
  const at::Tensor x = at::randn({4, 200});
  const at::Tensor want = smallGemmReference(x, constTensorValue({300, 200}), constTensorValue({300}));
  at::set_num_threads(2);
  at::Tensor y2 = m->run({x}).toTensor().clone();
  at::set_num_threads(before);
  EXPECT_TRUE(bitEqual(y2, want));
  EXPECT_TRUE(bitEqual(m->run({x}).toTensor(), want));
}

TEST(OutConvLinear, LinearRuntimeWeight) {
  OpTester(R"IR(
graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %y : Tensor = aten::linear(%x, %w, %b)
  return (%y)
)IR")
      .inputs({at::randn({2, 5}), at::randn({3, 5}), at::randn({3})})
      .inputs({at::randn({9, 5}), at::randn({7, 5}), at::randn({7})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::linear", kOut)
      .run();
  OpTester(R"IR(
graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %y : Tensor = aten::linear(%x, %w, %b)
  return (%y)
)IR")
      .inputs({at::randn({1, 2, 5}), at::randn({3, 5}), at::randn({3})})
      .inputs({at::randn({2, 9, 5}), at::randn({7, 5}), at::randn({7})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::linear", kOut)
      .run();
}

TEST(OutConvLinear, Mm) {
  OpTester("graph(%a : Tensor, %b : Tensor):\n  %c : Tensor = aten::mm(%a, %b)\n  return (%c)\n")
      .inputs({at::randn({2, 3}), at::randn({3, 4})})
      .inputs({at::randn({9, 6}), at::randn({6, 5}).t().contiguous().t()})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::mm", kOut)
      .run();
}

TEST(OutConvLinear, Bmm) {
  OpTester("graph(%a : Tensor, %b : Tensor):\n  %c : Tensor = aten::bmm(%a, %b)\n  return (%c)\n")
      .inputs({at::randn({2, 2, 3}), at::randn({2, 3, 4})})
      .inputs({at::randn({5, 9, 6}), at::randn({5, 4, 6}).transpose(1, 2)})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::bmm", kOut)
      .run();
}

TEST(OutConvLinear, Addmm) {
  OpTester(R"IR(
graph(%s : Tensor, %a : Tensor, %b : Tensor):
  %beta : float = prim::Constant[value=0.5]()
  %alpha : int = prim::Constant[value=2]()
  %c : Tensor = aten::addmm(%s, %a, %b, %beta, %alpha)
  return (%c)
)IR")
      .inputs({at::randn({4}), at::randn({2, 3}), at::randn({3, 4})})
      .inputs({at::randn({5}), at::randn({8, 6}), at::randn({6, 5})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::addmm", kOut)
      .run();
}

TEST(OutConvLinear, Baddbmm) {
  OpTester(R"IR(
graph(%s : Tensor, %a : Tensor, %b : Tensor):
  %beta : int = prim::Constant[value=1]()
  %alpha : float = prim::Constant[value=0.25]()
  %c : Tensor = aten::baddbmm(%s, %a, %b, %beta, %alpha)
  return (%c)
)IR")
      .inputs({at::randn({2, 1, 4}), at::randn({2, 3, 5}), at::randn({2, 5, 4})})
      .inputs({at::randn({4, 6, 7}), at::randn({4, 6, 3}), at::randn({4, 3, 7})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::baddbmm", kOut)
      .run();
}

TEST(OutConvLinear, Matmul) {
  const char* ir = "graph(%a : Tensor, %b : Tensor):\n  %c : Tensor = aten::matmul(%a, %b)\n  return (%c)\n";
  OpTester(ir)  // 3-D x 2-D (folded into one mm)
      .inputs({at::randn({2, 3, 4}), at::randn({4, 5})})
      .inputs({at::randn({3, 7, 4}), at::randn({4, 6})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::matmul", kOut)
      .run();
  OpTester(ir)  // broadcast batch
      .inputs({at::randn({2, 1, 3, 4}), at::randn({5, 4, 2})})
      .inputs({at::randn({3, 1, 6, 4}), at::randn({2, 4, 3})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::matmul", kOut)
      .run();
  OpTester(ir)  // vector x vector
      .inputs({at::randn({4}), at::randn({4})})
      .inputs({at::randn({9}), at::randn({9})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::matmul", kOut)
      .run();
}

// aten::convolution (core ATen IR): the arguments after the weight and bias, as IR
// constants.
std::string convolutionArgsIR(const std::string& stride, const std::string& pad, const std::string& dil,
                              bool transposed, const std::string& out_pad, int groups) {
  return "  %s : int[] = prim::Constant[value=" + stride + "]()\n  %p : int[] = prim::Constant[value=" + pad +
         "]()\n  %d : int[] = prim::Constant[value=" + dil + "]()\n  %tr : bool = prim::Constant[value=" +
         (transposed ? "1" : "0") + "]()\n  %op : int[] = prim::Constant[value=" + out_pad +
         "]()\n  %g : int = prim::Constant[value=" + std::to_string(groups) + "]()\n";
}
const char* kConvolutionCall = "  %y : Tensor = aten::convolution(%x, %w, %b, %s, %p, %d, %tr, %op, %g)\n  return (%y)\n";

// Frozen weights, as torch.export's graphs carry them; ATen's own _convolution call,
// so the bits are the interpreter's.
TEST(OutConvLinear, ConvolutionConstWeights) {
  OpTester("graph(%x : Tensor):\n" + constTensorIR("w", {8, 3, 3, 3}) + constTensorIR("b", {8}) +
           convolutionArgsIR("[1, 1]", "[1, 1]", "[1, 1]", false, "[0, 0]", 1) + kConvolutionCall)
      .inputs({at::randn({1, 3, 8, 8})})
      .inputs({at::randn({2, 3, 11, 9})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::convolution", kDirect)
      .run();
}

TEST(OutConvLinear, ConvolutionDepthwiseStridedNoBias) {
  OpTester("graph(%x : Tensor):\n" + constTensorIR("w", {6, 1, 3, 3}) + "  %b : NoneType = prim::Constant()\n" +
           convolutionArgsIR("[2, 2]", "[1, 1]", "[1, 1]", false, "[0, 0]", 6) + kConvolutionCall)
      .inputs({at::randn({1, 6, 9, 9})})
      .inputs({at::randn({2, 6, 14, 10})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::convolution", kDirect)
      .run();
}

TEST(OutConvLinear, ConvolutionTransposed) {
  OpTester("graph(%x : Tensor):\n" + constTensorIR("w", {4, 3, 3, 3}) + constTensorIR("b", {3}) +
           convolutionArgsIR("[2, 2]", "[1, 1]", "[1, 1]", true, "[1, 1]", 1) + kConvolutionCall)
      .inputs({at::randn({1, 4, 5, 5})})
      .inputs({at::randn({2, 4, 7, 6})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::convolution", kDirect)
      .run();
}

// conv1d's decomposition, with weight and bias given at run time.
TEST(OutConvLinear, Convolution1dRuntimeWeights) {
  at::Tensor w = at::randn({5, 3, 3}), b = at::randn({5});
  OpTester("graph(%x : Tensor, %w : Tensor, %b : Tensor):\n" +
           convolutionArgsIR("[1]", "[0]", "[2]", false, "[0]", 1) + kConvolutionCall)
      .inputs({at::randn({1, 3, 10}), w, b})
      .inputs({at::randn({3, 3, 17}), w, b})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::convolution", kDirect)
      .run();
}

}  // namespace
}  // namespace brisk::testing
