// The onednn delegate's blocked layout between convolution partitions
// (delegates/onednn/layout_flow.h): a region that starts at a stem over an image and
// runs through depthwise and pointwise convolutions passes its results as nChw16c (or
// nChw8c) tensors, residual operand included. The outputs match the interpreter on
// several shapes (channel counts that do not fill a block among them), repeated runs
// and untouched inputs, with the layout on and off; brisk inspect says which partition
// computes in which layout. A region also starts at a model input of many channels, and
// its last partition computes blocked where its convolution prefers that, converting
// the result on the way out.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/executor/module.h"
#include "core/kernels/delegate.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

const Tolerance kTol{1e-4, 1e-4};

// stem 3x3 (3 -> 16) -> depthwise 3x3 -> pointwise 16 -> 24 -> pointwise 24 -> 24 with the
// residual from the step before -> pointwise 24 -> 8 -> flatten (leaves the backend).
std::string regionIR() {
  return "graph(%x : Tensor):\n" + constTensorIR("w1", {16, 3, 3, 3}) + constTensorIR("b1", {16}) +
         constTensorIR("w2", {16, 1, 3, 3}) + constTensorIR("b2", {16}) + constTensorIR("w3", {24, 16, 1, 1}) +
         constTensorIR("b3", {24}) + constTensorIR("w4", {24, 24, 1, 1}) + constTensorIR("b4", {24}) +
         constTensorIR("w5", {8, 24, 1, 1}) + constTensorIR("b5", {8}) +
         "  %s1 : int[] = prim::Constant[value=[1, 1]]()\n"
         "  %s2 : int[] = prim::Constant[value=[2, 2]]()\n"
         "  %p0 : int[] = prim::Constant[value=[0, 0]]()\n"
         "  %g1 : int = prim::Constant[value=1]()\n"
         "  %g16 : int = prim::Constant[value=16]()\n"
         "  %one : int = prim::Constant[value=1]()\n"
         "  %zero : float = prim::Constant[value=0.]()\n"
         "  %six : float = prim::Constant[value=6.]()\n"
         "  %c1 : Tensor = aten::conv2d(%x, %w1, %b1, %s2, %s1, %s1, %g1)\n"
         "  %r1 : Tensor = aten::relu(%c1)\n"
         "  %c2 : Tensor = aten::conv2d(%r1, %w2, %b2, %s1, %s1, %s1, %g16)\n"
         "  %r2 : Tensor = aten::hardtanh(%c2, %zero, %six)\n"
         "  %c3 : Tensor = aten::conv2d(%r2, %w3, %b3, %s1, %p0, %s1, %g1)\n"
         "  %c4 : Tensor = aten::conv2d(%c3, %w4, %b4, %s1, %p0, %s1, %g1)\n"
         "  %a4 : Tensor = aten::add(%c4, %c3, %one)\n"
         "  %r4 : Tensor = aten::relu(%a4)\n"
         "  %c5 : Tensor = aten::conv2d(%r4, %w5, %b5, %s1, %p0, %s1, %g1)\n"
         "  %end : int = prim::Constant[value=-1]()\n"
         "  %out : Tensor = aten::flatten(%c5, %one, %end)\n"
         "  return (%out)\n";
}

Options options(bool blocked) {
  Options o;
  o.strict_inputs = false;
  o.plugin_options["onednn.blocked_layout"] = blocked;
  return o;
}

// The interpreter check of `ir` with the onednn delegate, the blocked layout on or off.
OpTester delegated(const std::string& ir, bool blocked) {
  return std::move(OpTester(ir).options(options(blocked)).withDelegates().tolerance(kTol).expectKernel(
      kDelegateKind, KernelKind::kDelegate));
}

// delegated(ir, ...) on each of `inputs` (one input tensor per call), with the blocked
// layout on and then off.
void expectMatchesWithTheLayoutOnAndOff(const std::string& ir, const std::vector<at::Tensor>& inputs) {
  for (bool blocked : {true, false}) {
    SCOPED_TRACE(blocked ? "blocked" : "nhwc");
    OpTester t = delegated(ir, blocked);
    for (const at::Tensor& x : inputs) t.inputs({x});
    t.run();
  }
}

std::vector<std::string> delegateDetails(const Module& m) {
  std::vector<std::string> d;
  for (const NodeKernelInfo& k : m.kernelReport())
    if (k.op == kDelegateKind) d.push_back(k.detail);
  return d;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(OneDnnBlockedLayout, RegionFromTheStemToTheFirstResultThatLeaves) {
  auto m = Module::fromIR(regionIR(), options(true), "blocked-region");
  const std::vector<std::string> d = delegateDetails(*m);
  ASSERT_EQ(d.size(), 5u);
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(d[i]);
    EXPECT_TRUE(has(d[i], " in nChw")) << "partition " << i << " computes blocked";
    EXPECT_TRUE(has(d[i], "output: nChw")) << "and writes its result blocked";
  }
  for (size_t i = 1; i < 5; ++i) EXPECT_TRUE(has(d[i], "input: nChw")) << d[i];
  EXPECT_TRUE(has(d[3], "residual: nChw")) << d[3];
  // The exit: a pointwise convolution computes blocked too, and converts its result
  // for the flatten (8 channels: half a block).
  EXPECT_TRUE(has(d[4], " in nChw")) << d[4];
  EXPECT_FALSE(has(d[4], "from a convolution partition, to")) << d[4];
  EXPECT_TRUE(has(d[4], "output: nChw")) << d[4];
  EXPECT_TRUE(has(d[4], " -> nchw")) << d[4];
}

TEST(OneDnnBlockedLayout, OutputsMatchTheInterpreterWithTheLayoutOnAndOff) {
  expectMatchesWithTheLayoutOnAndOff(regionIR(), {at::randn({1, 3, 17, 13}), at::randn({3, 3, 8, 9}),
                                                  at::randn({2, 3, 1, 1}),
                                                  at::randn({1, 3, 17, 13}).contiguous(at::MemoryFormat::ChannelsLast)});
}

// regionIR without its stem: the depthwise convolution reads `source` (16 channels).
std::string withoutStem(const std::string& source) {
  std::string ir = regionIR();
  const size_t stem = ir.find("  %c1 : Tensor");
  ir.erase(stem, ir.find("  %c2 : Tensor") - stem);
  ir.replace(ir.find("aten::conv2d(%r1,"), 17, "aten::conv2d(" + source + ",");
  return ir;
}

TEST(OneDnnBlockedLayout, OffOrFromAnOpResultEverythingStaysNhwc) {
  for (const NodeKernelInfo& k : Module::fromIR(regionIR(), options(false), "off")->kernelReport())
    if (k.op == kDelegateKind) EXPECT_FALSE(has(k.detail, "nChw")) << k.detail;
  // The source is an op's result, whose layout the graph does not tell (an NHWC one
  // would have to be converted into a region where it is read as it is now): nothing
  // starts a region.
  std::string ir = withoutStem("%xr");
  ir.insert(ir.find("  %c2 : Tensor"), "  %xr : Tensor = aten::relu(%x)\n");
  auto m = Module::fromIR(ir, options(true), "no-stem");
  EXPECT_EQ(delegateDetails(*m).size(), 4u);
  for (const NodeKernelInfo& k : m->kernelReport())
    if (k.op == kDelegateKind) EXPECT_FALSE(has(k.detail, "nChw")) << k.detail;
}

// A model input of many channels starts a region too: it arrives NCHW, and oneDNN
// converts that to its blocked layout faster than to NHWC.
TEST(OneDnnBlockedLayout, AModelInputStartsARegion) {
  const std::string ir = withoutStem("%x");
  const std::vector<std::string> d = delegateDetails(*Module::fromIR(ir, options(true), "input-region"));
  ASSERT_EQ(d.size(), 4u);
  EXPECT_TRUE(has(d[0], "input: to nChw")) << d[0];
  for (const std::string& detail : d) EXPECT_TRUE(has(detail, " in nChw")) << detail;
  expectMatchesWithTheLayoutOnAndOff(
      ir, {at::randn({1, 16, 17, 13}), at::randn({2, 16, 5, 6}).contiguous(at::MemoryFormat::ChannelsLast),
           at::randn({3, 16, 1, 1})});
}

// Two branches from one input into a concatenation, as inception_nofork: 1x1 64 -> 32
// -> 3x3 32 -> 48, and 1x1 64 -> 16 -> 5x5 16 -> 24. Each branch is a region from the
// model input to an exit that converts 48 (three whole blocks) and 24 channels (one and
// a half) to NCHW for the concatenation.
TEST(OneDnnBlockedLayout, BranchesIntoAConcatenation) {
  const std::string ir =
      "graph(%x : Tensor):\n" + constTensorIR("w1", {32, 64, 1, 1}) + constTensorIR("b1", {32}) +
      constTensorIR("w2", {48, 32, 3, 3}) + constTensorIR("b2", {48}) + constTensorIR("w3", {16, 64, 1, 1}) +
      constTensorIR("b3", {16}) + constTensorIR("w4", {24, 16, 5, 5}) + constTensorIR("b4", {24}) +
      "  %s1 : int[] = prim::Constant[value=[1, 1]]()\n"
      "  %p0 : int[] = prim::Constant[value=[0, 0]]()\n"
      "  %p2 : int[] = prim::Constant[value=[2, 2]]()\n"
      "  %g1 : int = prim::Constant[value=1]()\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %c1 : Tensor = aten::conv2d(%x, %w1, %b1, %s1, %p0, %s1, %g1)\n"
      "  %r1 : Tensor = aten::relu(%c1)\n"
      "  %c2 : Tensor = aten::conv2d(%r1, %w2, %b2, %s1, %s1, %s1, %g1)\n"
      "  %r2 : Tensor = aten::relu(%c2)\n"
      "  %c3 : Tensor = aten::conv2d(%x, %w3, %b3, %s1, %p0, %s1, %g1)\n"
      "  %r3 : Tensor = aten::relu(%c3)\n"
      "  %c4 : Tensor = aten::conv2d(%r3, %w4, %b4, %s1, %p2, %s1, %g1)\n"
      "  %r4 : Tensor = aten::relu(%c4)\n"
      "  %l : Tensor[] = prim::ListConstruct(%r2, %r4)\n"
      "  %y : Tensor = aten::cat(%l, %one)\n"
      "  return (%y)\n";
  const std::vector<std::string> d = delegateDetails(*Module::fromIR(ir, options(true), "branches"));
  ASSERT_EQ(d.size(), 4u);
  for (const std::string& detail : d) EXPECT_TRUE(has(detail, " in nChw")) << detail;
  expectMatchesWithTheLayoutOnAndOff(ir, {at::randn({1, 64, 28, 28}), at::randn({2, 64, 9, 7})});
}

// stem 3 -> 8 -> dense 3x3 8 -> 8 (oneDNN 3.2 has only its reference kernel for that one
// blocked: the partition computes NHWC and reorders its result) -> depthwise -> 1x1 ->
// flatten. The chain is still one blocked region, and the outputs match.
TEST(OneDnnBlockedLayout, AConvolutionWithoutABlockedKernelReordersItsResult) {
  const std::string ir = "graph(%x : Tensor):\n" + constTensorIR("w1", {8, 3, 3, 3}) + constTensorIR("w2", {8, 8, 3, 3}) +
                         constTensorIR("w3", {8, 1, 3, 3}) + constTensorIR("w4", {16, 8, 1, 1}) +
                         "  %none : NoneType = prim::Constant()\n"
                         "  %s1 : int[] = prim::Constant[value=[1, 1]]()\n"
                         "  %p0 : int[] = prim::Constant[value=[0, 0]]()\n"
                         "  %g1 : int = prim::Constant[value=1]()\n"
                         "  %g8 : int = prim::Constant[value=8]()\n"
                         "  %one : int = prim::Constant[value=1]()\n"
                         "  %end : int = prim::Constant[value=-1]()\n"
                         "  %c1 : Tensor = aten::conv2d(%x, %w1, %none, %s1, %s1, %s1, %g1)\n"
                         "  %r1 : Tensor = aten::relu(%c1)\n"
                         "  %c2 : Tensor = aten::conv2d(%r1, %w2, %none, %s1, %s1, %s1, %g1)\n"
                         "  %c3 : Tensor = aten::conv2d(%c2, %w3, %none, %s1, %s1, %s1, %g8)\n"
                         "  %c4 : Tensor = aten::conv2d(%c3, %w4, %none, %s1, %p0, %s1, %g1)\n"
                         "  %out : Tensor = aten::flatten(%c4, %one, %end)\n"
                         "  return (%out)\n";
  const std::vector<std::string> d = delegateDetails(*Module::fromIR(ir, options(true), "reordered"));
  ASSERT_EQ(d.size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(has(d[i], "output: nChw")) << d[i];
  delegated(ir, true)
      .inputs({at::randn({1, 3, 10, 12})})
      .inputs({at::randn({2, 3, 5, 5})})
      .run();
}

// A blocked residual that broadcasts onto the result (a 1x1 convolution's result over a
// pooled or single-row input, or of one channel): the partition expands it itself, since
// its fallback, the fp32 nested block, cannot read a blocked tensor. 24 channels: the
// residual's second block ends in padding.
TEST(OneDnnBlockedLayout, AResidualThatBroadcastsIsExpanded) {
  for (const int64_t residual_channels : {int64_t{24}, int64_t{1}}) {
    SCOPED_TRACE(residual_channels);
    const std::string ir = "graph(%x : Tensor, %z : Tensor):\n" + constTensorIR("w1", {residual_channels, 16, 1, 1}) +
                           constTensorIR("b1", {residual_channels}) + constTensorIR("w2", {24, 16, 1, 1}) +
                           constTensorIR("b2", {24}) +
                           "  %s1 : int[] = prim::Constant[value=[1, 1]]()\n"
                           "  %p0 : int[] = prim::Constant[value=[0, 0]]()\n"
                           "  %g1 : int = prim::Constant[value=1]()\n"
                           "  %one : int = prim::Constant[value=1]()\n"
                           "  %c1 : Tensor = aten::conv2d(%z, %w1, %b1, %s1, %p0, %s1, %g1)\n"
                           "  %c2 : Tensor = aten::conv2d(%x, %w2, %b2, %s1, %p0, %s1, %g1)\n"
                           "  %sum : Tensor = aten::add(%c2, %c1, %one)\n"
                           "  %out : Tensor = aten::relu(%sum)\n"
                           "  return (%out)\n";
    const std::vector<std::string> d = delegateDetails(*Module::fromIR(ir, options(true), "broadcast-residual"));
    ASSERT_EQ(d.size(), 2u);
    EXPECT_TRUE(has(d[0], "output: nChw")) << d[0];
    EXPECT_TRUE(has(d[1], "residual: nChw")) << d[1];
    for (bool blocked : {true, false}) {
      SCOPED_TRACE(blocked ? "blocked" : "nhwc");
      delegated(ir, blocked)
          .inputs({at::randn({2, 16, 5, 7}), at::randn({2, 16, 1, 1})})
          .inputs({at::randn({2, 16, 5, 7}), at::randn({1, 16, 5, 7})})
          .inputs({at::randn({1, 16, 6, 6}), at::randn({1, 16, 6, 6})})
          .inputs({at::randn({3, 16, 4, 5}), at::randn({1, 16, 1, 5})})
          .run();
    }
  }
}

// A reader of the sizes alone (EfficientNet's squeeze-excite checks the rank) leaves a
// result NHWC: no conversion to NCHW for it.
TEST(OneDnnBlockedLayout, SizeReadersKeepTheResultNhwc) {
  const std::string ir = "graph(%x : Tensor):\n" + constTensorIR("w1", {16, 8, 3, 3}) + constTensorIR("w2", {4, 16, 1, 1}) +
                         "  %none : NoneType = prim::Constant()\n"
                         "  %s1 : int[] = prim::Constant[value=[1, 1]]()\n"
                         "  %p0 : int[] = prim::Constant[value=[0, 0]]()\n"
                         "  %g1 : int = prim::Constant[value=1]()\n"
                         "  %c1 : Tensor = aten::conv2d(%x, %w1, %none, %s1, %s1, %s1, %g1)\n"
                         "  %r1 : Tensor = aten::relu(%c1)\n"
                         "  %sz : int[] = aten::size(%r1)\n"
                         "  %rank : int = aten::len(%sz)\n"
                         "  %c2 : Tensor = aten::conv2d(%r1, %w2, %none, %s1, %p0, %s1, %g1)\n"
                         "  %out : (Tensor, int) = prim::TupleConstruct(%c2, %rank)\n"
                         "  return (%out)\n";
  const std::vector<std::string> d = delegateDetails(*Module::fromIR(ir, options(true), "size-reader"));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_TRUE(has(d[0], "output: nhwc")) << d[0];
  EXPECT_FALSE(has(d[0], "-> nchw")) << d[0];
  delegated(ir, true).inputs({at::randn({2, 8, 6, 7})}).run();
}

}  // namespace
}  // namespace brisk::testing
