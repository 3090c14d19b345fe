// int8_dynamic on recurrent layers (ops_quantized/rnn_int8.h): aten::lstm / aten::gru with
// frozen weights run on the int8 projections, within a stated bound of the interpreter's
// fp32 result (layers, directions, layouts, batch and sequence sizes), with the inputs left
// unchanged and repeated runs bit-equal; inputs the loop does not cover run ATen's fp32
// layer, exactly; modes that do not cover recurrent layers leave them alone.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "core/executor/module.h"
#include "tests/ops/op_tester.h"
#include "tests/ops/rnn_ir.h"

namespace brisk::testing {
namespace {

// The largest difference from fp32 over the largest fp32 magnitude of each output: the
// README's int8 bound, on weights within nn.LSTM's initial range (1 / sqrt(hidden)).
constexpr double kBound = 0.03;

std::shared_ptr<Module> load(const std::string& ir, std::vector<std::string> precision, const std::string& name) {
  Options o;
  o.precision = std::move(precision);
  o.strict_inputs = false;
  return Module::fromIR(ir, o, name);
}

std::vector<at::Tensor> tensors(const c10::IValue& v) {
  std::vector<at::Tensor> out;
  for (const c10::IValue& e : v.toTupleRef().elements()) out.push_back(e.toTensor());
  return out;
}

double worstError(const c10::IValue& got, const c10::IValue& want) {
  const std::vector<at::Tensor> g = tensors(got), w = tensors(want);
  EXPECT_EQ(g.size(), w.size());
  double worst = 0;
  for (size_t i = 0; i < g.size() && i < w.size(); ++i) {
    EXPECT_EQ(g[i].sizes(), w[i].sizes());
    const double scale = std::max(w[i].abs().max().item<double>(), 1e-6);
    worst = std::max(worst, (g[i] - w[i]).abs().max().item<double>() / scale);
  }
  return worst;
}

void expectInt8Layer(const RnnShape& s, bool batch_first) {
  const bool lstm = s.gates == 4;
  const std::string ir = lstm ? lstmIR(s, batch_first) : gruIR(s, batch_first);
  const std::string kind = lstm ? "ops_quantized::lstm_int8_dynamic" : "ops_quantized::gru_int8_dynamic";
  auto fp32 = load(ir, {}, "fp32");
  auto m = load(ir, {"int8_dynamic"}, "int8-rnn");
  const std::optional<NodeKernelInfo> k = kernelInfo(*m, kind);
  ASSERT_TRUE(k) << "the layer was not rewritten";
  EXPECT_EQ(k->kind, KernelKind::kOutVariant);
  EXPECT_EQ(k->provider, "ops_quantized");
  EXPECT_FALSE(kernelInfo(*m, lstm ? "aten::lstm.input" : "aten::gru.input"));
  at::manual_seed(7);
  for (auto [len, batch] : {std::pair<int64_t, int64_t>{7, 2}, {1, 1}, {12, 5}, {3, 3}}) {
    SCOPED_TRACE("len " + std::to_string(len) + " batch " + std::to_string(batch));
    const std::vector<c10::IValue> in = rnnInputs(s, batch_first, len, batch);
    std::vector<at::Tensor> before;
    for (const c10::IValue& v : in) before.push_back(v.toTensor().clone());
    const c10::IValue want = fp32->run(in);
    const std::vector<at::Tensor> first = tensors(m->run(in));
    std::vector<at::Tensor> kept;
    for (const at::Tensor& t : first) kept.push_back(t.clone());
    const c10::IValue second = m->run(in);
    const std::vector<at::Tensor> again = tensors(second);
    for (size_t i = 0; i < kept.size(); ++i) EXPECT_TRUE(at::equal(kept[i], again[i])) << "output " << i;
    for (size_t i = 0; i < in.size(); ++i) EXPECT_TRUE(at::equal(in[i].toTensor(), before[i])) << "input " << i;
    const double err = worstError(second, want);
    std::cout << kind << " " << s.layers << " layer(s) x" << (s.bidirectional ? 2 : 1) << " hidden " << s.hidden
              << " len " << len << " batch " << batch << ": " << err << " of fp32's largest magnitude\n";
    EXPECT_LE(err, kBound);
    EXPECT_GT(err, 0.0) << "int8 in name only";
  }
}

TEST(QuantizedRnn, LstmLayersDirectionsAndLayouts) {
  for (int64_t layers : {1, 2})
    for (bool bidir : {false, true})
      for (bool batch_first : {false, true}) {
        SCOPED_TRACE("layers " + std::to_string(layers) + (bidir ? " bidirectional" : "") +
                     (batch_first ? " batch_first" : ""));
        expectInt8Layer(RnnShape{4, 5, 11, layers, bidir, true, 0, 0.3}, batch_first);
      }
  expectInt8Layer(RnnShape{4, 32, 48, 2, true, false, 0, 0.144}, true);  // the zoo tagger's size, no biases
}

TEST(QuantizedRnn, GruLayersDirectionsAndLayouts) {
  for (int64_t layers : {1, 2})
    for (bool bidir : {false, true})
      for (bool batch_first : {false, true}) {
        SCOPED_TRACE("layers " + std::to_string(layers) + (bidir ? " bidirectional" : "") +
                     (batch_first ? " batch_first" : ""));
        expectInt8Layer(RnnShape{3, 5, 11, layers, bidir, true, 0, 0.3}, batch_first);
      }
  expectInt8Layer(RnnShape{3, 24, 40, 1, false, false, 0, 0.158}, false);
}

// A strided input is not the loop's: ATen's fp32 layer on the unquantized weights, so the
// interpreter's result exactly.
TEST(QuantizedRnn, InputsOutsideTheLoopRunAtensFp32Layer) {
  const RnnShape s{4, 5, 11, 1, false, true};
  const std::string ir = lstmIR(s, false);
  auto fp32 = load(ir, {}, "fp32");
  auto m = load(ir, {"int8_dynamic"}, "int8-rnn");
  ASSERT_TRUE(kernelInfo(*m, "ops_quantized::lstm_int8_dynamic"));
  std::vector<c10::IValue> in = rnnInputs(s, false, 6, 3);
  in[0] = at::randn({3, 6, 5}).transpose(0, 1);  // [T, B, I], not contiguous
  ASSERT_FALSE(in[0].toTensor().is_contiguous());
  const std::vector<at::Tensor> got = tensors(m->run(in)), want = tensors(fp32->run(in));
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(at::allclose(got[i], want[i], 1e-4, 1e-5)) << i;
  // With ATen's kernels on both sides, exactly the interpreter's bits.
  Options aten;
  aten.use_out_variants = false;
  aten.strict_inputs = false;
  auto reference = Module::fromIR(ir, aten, "aten");
  const std::vector<at::Tensor> exact = tensors(reference->run(in));
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(at::equal(got[i], exact[i])) << i;
}

// fp16_weights covers linear layers only: the recurrent layer stays on brisk's fp32
// kernel. int8_dynamic takes it wherever it is listed (no other mode runs it), also
// after bf16; with out-variant kernels off it stays fp32.
TEST(QuantizedRnn, WhichModesTakeTheLayer) {
  const std::string ir = gruIR(RnnShape{3, 5, 11, 1, false, true}, false);
  EXPECT_FALSE(kernelInfo(*load(ir, {"fp16_weights"}, "fp16"), "ops_quantized::gru_int8_dynamic"));
  EXPECT_TRUE(kernelInfo(*load(ir, {"fp16_weights"}, "fp16"), "aten::gru.input"));
  EXPECT_TRUE(kernelInfo(*load(ir, {"bf16", "int8_dynamic"}, "bf16-int8"), "ops_quantized::gru_int8_dynamic"));
  EXPECT_TRUE(kernelInfo(*load(ir, {"fp16_weights", "int8_dynamic"}, "fp16-int8"), "ops_quantized::gru_int8_dynamic"));
  Options o;
  o.precision = {"int8_dynamic"};
  o.use_out_variants = false;
  o.strict_inputs = false;
  EXPECT_FALSE(kernelInfo(*Module::fromIR(ir, o, "no-out"), "ops_quantized::gru_int8_dynamic"));
}

}  // namespace
}  // namespace brisk::testing
