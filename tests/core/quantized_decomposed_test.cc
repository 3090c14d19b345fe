// PT2E's quantize / dequantize ops (core/graph/quantized_decomposed.h), which PyTorch
// defines in Python only: brisk's schemas, PyTorch's arithmetic on values whose results
// are known exactly (round half to even, the bounds, per-channel axes), the errors where
// PyTorch's reference asserts, and a PT2 program of them (tools/zoo pt2e_convnet) loaded
// in a process where the dispatcher has none of them: the weights' dequantize folded at
// load, the activations' quantize / dequantize on core's kernels, the output that of the
// program's ep.module() (within a fraction of a quantization step: pt2_zoo_test.py says
// why).
#include "core/graph/quantized_decomposed.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "core/frontend/model_inputs.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

c10::OperatorName name(const std::string& n, const std::string& overload = "") {
  return c10::OperatorName("quantized_decomposed::" + n, overload);
}

TEST(QuantizedDecomposed, SchemasOfTheOpsBriskRuns) {
  for (const auto& [n, overload, args] : std::vector<std::tuple<std::string, std::string, size_t>>{
           {"quantize_per_tensor", "", 6},
           {"quantize_per_tensor", "tensor", 6},
           {"dequantize_per_tensor", "", 7},
           {"dequantize_per_tensor", "tensor", 7},
           {"quantize_per_channel", "", 7},
           {"dequantize_per_channel", "", 8}}) {
    const c10::FunctionSchema* s = quantizedDecomposedSchema(name(n, overload));
    ASSERT_NE(s, nullptr) << n << "." << overload;
    EXPECT_EQ(s->arguments().size(), args) << n;
    EXPECT_TRUE(quantizedOpFor(s->name() + (overload.empty() ? "" : "." + overload)).has_value()) << n;
  }
  EXPECT_EQ(quantizedDecomposedSchema(name("choose_qparams", "tensor")), nullptr);
  EXPECT_EQ(quantizedDecomposedSchema(c10::OperatorName("aten::add", "Tensor")), nullptr);
  EXPECT_FALSE(quantizedOpFor("quantized_decomposed::fake_quant_per_channel").has_value());
}

TEST(QuantizedDecomposed, PerTensorArithmetic) {
  // Scale 0.25 (reciprocal 4, both exact): 0.125 -> 0.5 rounds to 0 and 0.375 -> 1.5 to 2
  // (half to even); -40 steps clamp at 0, 160 at 255.
  const at::Tensor x = at::tensor({0.125f, 0.375f, -10.0f, 40.0f, -0.125f, 1.0f});
  const std::string key = "quantized_decomposed::quantize_per_tensor";
  const at::Tensor q = runQuantizedDecomposed(QuantizedOp::kQuantizePerTensor,
                                              {x, 0.25, int64_t{128}, int64_t{0}, int64_t{255}, at::kByte}, key);
  EXPECT_TRUE(at::equal(q, at::tensor({128, 130, 88, 255, 128, 132}, at::kByte))) << q;
  // The .tensor overload reads one-element tensors as numbers.
  const at::Tensor qt = runQuantizedDecomposed(
      QuantizedOp::kQuantizePerTensor,
      {x, at::tensor({0.25}, at::kDouble), at::tensor({int64_t{128}}), int64_t{0}, int64_t{255}, at::kByte}, key);
  EXPECT_TRUE(at::equal(qt, q));
  const at::Tensor d = runQuantizedDecomposed(QuantizedOp::kDequantizePerTensor,
                                              {q, 0.25, int64_t{128}, int64_t{0}, int64_t{255}, at::kByte, c10::IValue()},
                                              "quantized_decomposed::dequantize_per_tensor");
  EXPECT_TRUE(at::equal(d, at::tensor({0.0f, 0.5f, -10.0f, 31.75f, 0.0f, 1.0f}))) << d;
}

TEST(QuantizedDecomposed, PerChannelAlongAnAxis) {
  // Axis 1 of a [2, 3] int8 tensor: channel c has scale c + 1 and zero point c.
  const at::Tensor q = at::tensor({1, 2, 3, -4, -5, -6}, at::kChar).view({2, 3});
  const at::Tensor scales = at::tensor({1.0, 2.0, 3.0}, at::kDouble);
  const at::Tensor zps = at::tensor({int64_t{0}, int64_t{1}, int64_t{2}});
  const at::Tensor d =
      runQuantizedDecomposed(QuantizedOp::kDequantizePerChannel,
                             {q, scales, zps, int64_t{1}, int64_t{-128}, int64_t{127}, at::kChar, c10::IValue()},
                             "quantized_decomposed::dequantize_per_channel");
  EXPECT_EQ(d.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(d, at::tensor({1.0f, 2.0f, 3.0f, -4.0f, -12.0f, -24.0f}).view({2, 3}))) << d;
  // Without zero points; and the quantize back (axis 1) gives the original values.
  const at::Tensor d0 = runQuantizedDecomposed(
      QuantizedOp::kDequantizePerChannel,
      {q, scales, c10::IValue(), int64_t{1}, int64_t{-128}, int64_t{127}, at::kChar, c10::IValue()},
      "quantized_decomposed::dequantize_per_channel");
  EXPECT_TRUE(at::allclose(d0, at::tensor({1.0f, 4.0f, 9.0f, -4.0f, -10.0f, -18.0f}).view({2, 3}))) << d0;
  const at::Tensor back =
      runQuantizedDecomposed(QuantizedOp::kQuantizePerChannel,
                             {d, scales, zps, int64_t{1}, int64_t{-128}, int64_t{127}, at::kChar},
                             "quantized_decomposed::quantize_per_channel");
  EXPECT_TRUE(at::equal(back, q)) << back;
}

TEST(QuantizedDecomposed, WhereThePyTorchReferenceAssertsBriskThrows) {
  const at::Tensor q = at::zeros({4}, at::kByte);
  EXPECT_THROW(runQuantizedDecomposed(QuantizedOp::kDequantizePerTensor,
                                      {q, 0.5, int64_t{0}, int64_t{-128}, int64_t{127}, at::kChar, c10::IValue()},
                                      "dq"),
               Error);  // uint8 input declared int8
  EXPECT_THROW(runQuantizedDecomposed(QuantizedOp::kQuantizePerTensor,
                                      {at::zeros({4}, at::kLong), 0.5, int64_t{0}, int64_t{0}, int64_t{255}, at::kByte},
                                      "q"),
               Error);  // not a float input
  EXPECT_THROW(runQuantizedDecomposed(QuantizedOp::kQuantizePerTensor,
                                      {at::zeros({4}), at::ones({2}, at::kDouble), at::zeros({2}, at::kLong),
                                       int64_t{0}, int64_t{255}, at::kByte},
                                      "q"),
               Error);  // a scale tensor of two elements
  EXPECT_THROW(runQuantizedDecomposed(QuantizedOp::kDequantizePerChannel,
                                      {at::zeros({2, 3}, at::kChar), at::ones({3}, at::kDouble), c10::IValue(),
                                       int64_t{2}, int64_t{-128}, int64_t{127}, at::kChar, c10::IValue()},
                                      "dq"),
               Error);  // axis out of range
}

TEST(QuantizedDecomposed, APt2eProgramLoadsAndRuns) {
  ASSERT_FALSE(c10::Dispatcher::singleton().findSchema(name("quantize_per_tensor")).has_value())
      << "this test runs where PyTorch's Python-defined ops are absent";
  for (const char* file : {"pt2e_convnet.pt2", "pt2e_convnet.core.pt2"}) {
    SCOPED_TRACE(file);
    auto m = Module::load(testing::zooFile(file));
    size_t per_channel = 0, per_tensor = 0;
    for (const NodeKernelInfo& k : m->kernelReport()) {
      if (k.op == "quantized_decomposed::dequantize_per_channel") ++per_channel;
      if (k.op.rfind("quantized_decomposed::", 0) == 0 && k.op.find("per_tensor") != std::string::npos) {
        ++per_tensor;
        EXPECT_EQ(k.provider, "core") << k.node;
      }
    }
    EXPECT_EQ(per_channel, 0u) << "each weight's dequantize is folded at load";
    if (std::string(file) == "pt2e_convnet.pt2") EXPECT_EQ(per_tensor, 6u);
    // (Against ep.module()'s reference: pt2_zoo_test.py.) Repeated runs give the same
    // bits, and the input is left as it was.
    ModelInputs in = loadInputs(testing::zooFile("pt2e_convnet.inputs.pt"));
    const ModelInputs before = cloneInputs(in);
    const at::Tensor first = m->run(in.args).toTensor().clone();
    EXPECT_EQ(first.sizes(), (std::vector<int64_t>{1, 10}));
    EXPECT_TRUE(at::isfinite(first).all().item<bool>());
    EXPECT_TRUE(at::equal(m->run(in.args).toTensor(), first));
    EXPECT_TRUE(at::equal(in.args[0].toTensor(), before.args[0].toTensor()));
  }
}

}  // namespace
}  // namespace brisk
