// The onednn delegate in bf16 (Options::precision "bf16"): convolution and linear
// partitions against the same model in fp32, within bf16's error, on several shapes and
// repeated runs, with the inputs left unchanged. A result only bf16 convolution
// partitions read stays bf16 between them (brisk inspect's edges say so), including a
// residual operand, and one that broadcasts. On a CPU without AVX512_BF16 the mode must
// leave the model in fp32, bit for bit.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/executor/module.h"
#include "core/kernels/delegate.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

bool cpuHasBf16() { return __builtin_cpu_supports("avx512bf16"); }

// Largest difference from `want` over its largest magnitude.
double relativeError(const at::Tensor& got, const at::Tensor& want) {
  EXPECT_EQ(got.sizes(), want.sizes());
  EXPECT_EQ(got.scalar_type(), at::kFloat);
  const at::Tensor g = got.to(at::kDouble), w = want.to(at::kDouble);
  return (g - w).abs().max().item<double>() / std::max(w.abs().max().item<double>(), 1e-6);
}

// `extra`: more plugin options, for the bf16 model only.
std::shared_ptr<Module> load(const std::string& ir, bool bf16, const std::string& name,
                             const std::map<std::string, PluginOptionValue>& extra = {}) {
  Options o;
  o.strict_inputs = false;
  o.plugin_options["onednn.linear"] = true;                 // on any CPU (its default follows AVX-512)
  o.plugin_options["onednn.linear_min_macs"] = int64_t{0};  // the tests' small shapes too
  if (bf16) {
    o.precision = {"bf16"};
    for (const auto& [k, v] : extra) o.plugin_options[k] = v;
  }
  return Module::fromIR(ir, o, name);
}

std::vector<std::string> delegateDetails(const Module& m) {
  std::vector<std::string> d;
  for (const NodeKernelInfo& k : m.kernelReport())
    if (k.op == kDelegateKind) d.push_back(k.detail);
  return d;
}

// Runs the bf16 and fp32 models on each input set twice: within `bound` of fp32 (equal
// bits without AVX512_BF16), the same both times, inputs unchanged.
void expectCloseToFp32(const std::string& ir, const std::vector<std::vector<at::Tensor>>& sets, double bound,
                       const std::map<std::string, PluginOptionValue>& extra = {}) {
  auto fp32 = load(ir, false, "fp32");
  auto bf16 = load(ir, true, "bf16", extra);
  for (const std::vector<at::Tensor>& in : sets) {
    SCOPED_TRACE(c10::str(in[0].sizes()));
    std::vector<c10::IValue> args(in.begin(), in.end());
    std::vector<at::Tensor> copies;
    for (const at::Tensor& t : in) copies.push_back(t.clone());
    const at::Tensor want = fp32->run(args).toTensor();
    const at::Tensor first = bf16->run(args).toTensor().clone();
    const at::Tensor second = bf16->run(args).toTensor();
    EXPECT_TRUE(at::equal(first, second)) << "a second run differs";
    if (cpuHasBf16()) {
      const double err = relativeError(second, want);
      EXPECT_LE(err, bound);
      EXPECT_GT(err, 0.0) << "bit-identical to fp32: did bf16 run at all?";
    } else {
      EXPECT_TRUE(at::equal(second, want)) << "bf16 without AVX512_BF16 must be fp32's bits";
    }
    for (size_t i = 0; i < in.size(); ++i) EXPECT_TRUE(at::equal(in[i], copies[i])) << "input " << i << " changed";
  }
}

const char* kConvConstants =
    "  %s : int[] = prim::Constant[value=[1, 1]]()\n"
    "  %p : int[] = prim::Constant[value=[1, 1]]()\n"
    "  %p0 : int[] = prim::Constant[value=[0, 0]]()\n"
    "  %g : int = prim::Constant[value=1]()\n"
    "  %one : int = prim::Constant[value=1]()\n";

// conv -> relu -> conv (+ the first result as residual) -> relu -> flatten: the first
// result is read only by the second partition, as source and as residual, so it stays
// bf16; the second result feeds a view, so it comes back as fp32 NCHW. (Eight input
// channels: over fewer, the first convolution would be a stem, which stays fp32.)
TEST(OneDnnBf16, ConvResultsStayBf16BetweenPartitions) {
  const std::string ir = "graph(%x : Tensor):\n" + constTensorIR("w1", {8, 8, 3, 3}) + constTensorIR("b1", {8}) +
                         constTensorIR("w2", {8, 8, 3, 3}) + constTensorIR("b2", {8}) + kConvConstants +
                         "  %c1 : Tensor = aten::conv2d(%x, %w1, %b1, %s, %p, %s, %g)\n"
                         "  %r1 : Tensor = aten::relu(%c1)\n"
                         "  %c2 : Tensor = aten::conv2d(%r1, %w2, %b2, %s, %p, %s, %g)\n"
                         "  %sum : Tensor = aten::add(%c2, %r1, %one)\n"
                         "  %r2 : Tensor = aten::relu(%sum)\n"
                         "  %start : int = prim::Constant[value=1]()\n"
                         "  %end : int = prim::Constant[value=-1]()\n"
                         "  %out : Tensor = aten::flatten(%r2, %start, %end)\n"
                         "  return (%out)\n";
  const std::vector<std::string> d = delegateDetails(*load(ir, true, "flow"));
  ASSERT_EQ(d.size(), 2u);
  if (cpuHasBf16()) {
    EXPECT_NE(d[0].find("in bf16"), std::string::npos) << d[0];
    EXPECT_NE(d[0].find("input: to nhwc bf16"), std::string::npos) << d[0];
    EXPECT_NE(d[0].find("output: nhwc bf16"), std::string::npos) << d[0];
    EXPECT_NE(d[1].find("input: nhwc bf16 from a convolution partition"), std::string::npos) << d[1];
    EXPECT_NE(d[1].find("residual: nhwc bf16 from a convolution partition"), std::string::npos) << d[1];
    EXPECT_NE(d[1].find("output: nhwc -> nchw"), std::string::npos) << d[1];
  } else {
    for (const std::string& s : d) EXPECT_EQ(s.find("bf16"), std::string::npos) << s;
  }
  expectCloseToFp32(ir,
                    {{at::randn({1, 8, 9, 9})},
                     {at::randn({3, 8, 5, 6})},
                     {at::randn({2, 8, 7, 7}).contiguous(at::MemoryFormat::ChannelsLast)},
                     {at::randn({2, 8, 7, 9}).transpose(2, 3)}},
                    0.02);
}

// A residual operand from a bf16 partition that broadcasts ([N, C, 1, 1] onto the
// convolution's result): the fp32 nested block cannot take bf16, so the partition
// expands the operand itself; same-shape operands take the fused add as usual.
TEST(OneDnnBf16, BroadcastingResidualFromABf16Partition) {
  const std::string ir = "graph(%x : Tensor, %z : Tensor):\n" + constTensorIR("w1", {8, 8, 1, 1}) +
                         constTensorIR("b1", {8}) + constTensorIR("w2", {8, 8, 3, 3}) + constTensorIR("b2", {8}) +
                         kConvConstants +
                         "  %c1 : Tensor = aten::conv2d(%z, %w1, %b1, %s, %p0, %s, %g)\n"
                         "  %a : Tensor = aten::relu(%c1)\n"
                         "  %c2 : Tensor = aten::conv2d(%x, %w2, %b2, %s, %p, %s, %g)\n"
                         "  %sum : Tensor = aten::add(%c2, %a, %one)\n"
                         "  %out : Tensor = aten::relu(%sum)\n"
                         "  return (%out)\n";
  if (cpuHasBf16()) {
    const std::vector<std::string> d = delegateDetails(*load(ir, true, "broadcast"));
    ASSERT_EQ(d.size(), 2u);
    EXPECT_NE(d[0].find("output: nhwc bf16"), std::string::npos) << d[0];
    EXPECT_NE(d[1].find("residual: nhwc bf16"), std::string::npos) << d[1];
  }
  expectCloseToFp32(ir,
                    {{at::randn({2, 8, 5, 7}), at::randn({2, 8, 1, 1})},
                     {at::randn({2, 8, 5, 7}), at::randn({1, 8, 1, 7})},
                     {at::randn({1, 8, 6, 6}), at::randn({1, 8, 6, 6})}},
                    0.02);
}

// A stem (a dense convolution over fewer than 8 channels) computes in fp32 under bf16 by
// default, and so hands its reader an fp32 result, which that reader converts to bf16;
// onednn.bf16_stem=true runs it in bf16 and keeps the edge bf16. Both stay within
// bf16's error of fp32.
TEST(OneDnnBf16, StemComputesInFp32UnlessAsked) {
  const std::string ir = "graph(%x : Tensor):\n" + constTensorIR("w1", {8, 3, 3, 3}) + constTensorIR("b1", {8}) +
                         constTensorIR("w2", {8, 8, 3, 3}) + constTensorIR("b2", {8}) + kConvConstants +
                         "  %c1 : Tensor = aten::conv2d(%x, %w1, %b1, %s, %p, %s, %g)\n"
                         "  %r1 : Tensor = aten::relu(%c1)\n"
                         "  %c2 : Tensor = aten::conv2d(%r1, %w2, %b2, %s, %p, %s, %g)\n"
                         "  %out : Tensor = aten::relu(%c2)\n"
                         "  return (%out)\n";
  const std::vector<std::vector<at::Tensor>> sets = {{at::randn({1, 3, 9, 9})}, {at::randn({2, 3, 7, 5})}};
  expectCloseToFp32(ir, sets, 0.02);
  if (!cpuHasBf16()) return;  // checked above: fp32's bits
  const std::vector<std::string> d = delegateDetails(*load(ir, true, "stem"));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].find("bf16"), std::string::npos) << d[0];
  EXPECT_NE(d[1].find("in bf16"), std::string::npos) << d[1];
  EXPECT_NE(d[1].find("input: to nhwc bf16"), std::string::npos) << d[1];

  const std::map<std::string, PluginOptionValue> stem_bf16 = {{"onednn.bf16_stem", true}};
  const std::vector<std::string> e = delegateDetails(*load(ir, true, "bf16 stem", stem_bf16));
  ASSERT_EQ(e.size(), 2u);
  EXPECT_NE(e[0].find("in bf16"), std::string::npos) << e[0];
  EXPECT_NE(e[0].find("output: nhwc bf16"), std::string::npos) << e[0];
  EXPECT_NE(e[1].find("input: nhwc bf16 from a convolution partition"), std::string::npos) << e[1];
  expectCloseToFp32(ir, sets, 0.02, stem_bf16);
}

// Linear layers, unary and binary forms, 2-D and batched inputs.
TEST(OneDnnBf16, LinearLayers) {
  const std::string relu = "graph(%x : Tensor):\n" + constTensorIR("w", {48, 40}) + constTensorIR("b", {48}) +
                           "  %y : Tensor = aten::linear(%x, %w, %b)\n"
                           "  %out : Tensor = aten::relu(%y)\n  return (%out)\n";
  const std::string add = "graph(%x : Tensor, %r : Tensor):\n" + constTensorIR("w", {48, 40}) +
                          constTensorIR("b", {48}) +
                          "  %one : int = prim::Constant[value=1]()\n"
                          "  %y : Tensor = aten::linear(%x, %w, %b)\n"
                          "  %out : Tensor = aten::add(%y, %r, %one)\n  return (%out)\n";
  for (const std::string* ir : {&relu, &add}) {
    if (cpuHasBf16()) {
      const std::vector<std::string> d = delegateDetails(*load(*ir, true, "linear"));
      ASSERT_EQ(d.size(), 1u);
      EXPECT_NE(d[0].find("oneDNN matmul in bf16"), std::string::npos) << d[0];
    }
  }
  expectCloseToFp32(relu, {{at::randn({16, 40})}, {at::randn({3, 11, 40})}}, 0.02);
  expectCloseToFp32(add, {{at::randn({16, 40}), at::randn({16, 48})}, {at::randn({3, 11, 40}), at::randn({3, 11, 48})}},
                    0.02);
}

}  // namespace
}  // namespace brisk::testing
