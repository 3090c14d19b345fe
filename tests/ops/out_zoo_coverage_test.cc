// Which zoo nodes the ops_cpu kernels serve: every node of an op listed for a model
// must get an ops_cpu kernel of the listed kind (no silent decline on the zoo's
// argument combinations), and no zoo node is left to the fallback kernel.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/executor/module.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;
// Direct calls of ATen's implementation that return fresh results: conv (libtorch has
// no real out form), the fused transformer ops, messages.
constexpr KernelKind kNat = KernelKind::kNative;

using OpKinds = std::map<std::string, KernelKind>;

// Ops the zoo uses and the kind of ops_cpu kernel that must serve them, per model.
const std::map<std::string, OpKinds>& expected() {
  static const std::map<std::string, OpKinds> m = {
      {"resnet18",
       {{"aten::conv2d", kNat},
        {"aten::relu", kOut},
        {"aten::max_pool2d", kOut},
        {"aten::add.Tensor", kOut},
        {"aten::adaptive_avg_pool2d", kOut},
        {"aten::linear", kOut}}},
      {"mobilenet_v2",
       {{"aten::conv2d", kNat},
        {"aten::hardtanh", kOut},
        {"aten::add.Tensor", kOut},
        {"aten::adaptive_avg_pool2d", kOut},
        {"aten::linear", kOut}}},
      {"mlp", {{"aten::linear", kOut}, {"aten::relu", kOut}}},
      {"deepandwide",
       {{"aten::linear", kOut},
        {"aten::relu", kOut},
        {"aten::embedding_bag.padding_idx", kOut},
        {"aten::cat", kOut},
        {"aten::sigmoid", kOut},
        {"aten::arange.start_step", kOut},
        {"aten::format", kNat}}},
      // torch 2.x's nn.MultiheadAttention: the fused fast path (_transformer_encoder_layer_fwd,
      // _native_multi_head_attention) and, for the cases it does not take,
      // scaled_dot_product_attention with a mask built by full/triu.
      {"transformer",
       {{"aten::_transformer_encoder_layer_fwd", kNat},
        {"aten::_native_multi_head_attention", kNat},
        {"aten::scaled_dot_product_attention", kNat},
        {"aten::unflatten.int", kNat},
        {"prim::type", kNat},
        {"aten::format", kNat},
        {"aten::warn", kNat},
        {"aten::linear", kOut},
        {"aten::masked_fill.Scalar", kOut},
        {"aten::full", kOut},
        {"aten::triu", kOut},
        {"aten::all", kOut},
        {"aten::add.Tensor", kOut},
        {"aten::layer_norm", kOut},
        {"aten::relu", kOut},
        {"aten::zeros_like", kOut}}},
      {"inception_nofork", {{"aten::conv2d", kNat}, {"aten::relu", kOut}, {"aten::cat", kOut}}},
      {"control_flow",
       {{"aten::sum", kOut},
        {"aten::gt.Scalar", kOut},
        {"aten::linear", kOut},
        {"aten::tanh", kOut},
        {"aten::neg", kOut},
        {"aten::cat", kOut},
        {"aten::mul.Scalar", kOut},
        {"aten::add.Tensor", kOut},
        {"aten::stack", kOut},
        {"aten::sum.dim_IntList", kOut}}},
      {"multi_output",
       {{"aten::linear", kOut},
        {"aten::add.Tensor", kOut},
        {"aten::mul.Scalar", kOut},
        {"aten::relu", kOut},
        {"aten::sum.dim_IntList", kOut}}},
      {"chain_mul100", {{"aten::mul.Scalar", kOut}, {"aten::mul.Tensor", kOut}}},
      {"chain_add100", {{"aten::add.Scalar", kOut}, {"aten::add.Tensor", kOut}}},
      {"lstm_tagger",
       {{"aten::embedding", kOut},
        {"aten::zeros", kOut},
        {"aten::lstm.input", kOut},  // brisk's own layer (ops_cpu/native/rnn_layers.h)
        {"aten::linear", kOut},
        {"aten::log_softmax.int", kOut}}},
      {"gru_encoder", {{"aten::zeros", kOut}, {"aten::gru.input", kOut}}},
  };
  return m;
}

class OutZooCoverage : public ::testing::TestWithParam<std::string> {};

TEST_P(OutZooCoverage, KeyOpsGetTheirKernels) {
  const std::string& model = GetParam();
  // Elementwise fusion and view chains would hide the single-op kernels this test is
  // about (chain_mul100 becomes one ops_cpu::fused_pointwise node); fused_pointwise_test
  // and view_chain_test cover them.
  Options o;
  o.disabled_passes = {"ops_cpu.fuse_pointwise", "ops_cpu.fuse_view_chain"};
  auto m = Module::load(testing::zooModel(model), o);
  const OpKinds& want = expected().at(model);
  std::set<std::string> fallback_ops;
  std::set<std::string> seen;
  for (const NodeKernelInfo& info : m->kernelReport()) {
    if (info.kind == KernelKind::kFallback) fallback_ops.insert(info.op);
    auto it = want.find(info.op);
    if (it == want.end()) continue;
    seen.insert(info.op);
    // conv2d: native (direct call) or out-variant (planned outputs), the conv kernel's
    // owner's choice (ops_cpu/out_variant/conv.cc); never the fallback.
    const bool conv = info.op == "aten::conv2d";
    // An out-variant op that writes into its free input (core/graph/inplace_reuse.h) keeps
    // its kind and says so in its output contract: its output is that input.
    const KernelKind kind = (conv && info.kind == kOut) ? kOut : it->second;
    if (info.in_place) {
      EXPECT_EQ(it->second, kOut) << info.node;
      EXPECT_EQ(info.outputs, OutputContract::kIntoInput) << info.node;
    }
    EXPECT_EQ(kernelKindName(info.kind), std::string(kernelKindName(kind)))
        << model << ": " << info.node << " -> " << info.provider << " (" << info.detail << ")";
    EXPECT_EQ(info.provider, "ops_cpu") << model << ": " << info.node;
  }
  for (const auto& [op, kind] : want) EXPECT_TRUE(seen.count(op)) << model << " has no " << op;
  std::string list;
  for (const std::string& op : fallback_ops) list += " " + op;
  EXPECT_TRUE(fallback_ops.empty()) << model << " has fallback ops:" << list;
}

INSTANTIATE_TEST_SUITE_P(Zoo, OutZooCoverage,
                         ::testing::Values("resnet18", "mobilenet_v2", "mlp", "deepandwide", "transformer",
                                           "inception_nofork", "control_flow", "multi_output", "chain_mul100",
                                           "chain_add100", "lstm_tagger", "gru_encoder"));

}  // namespace
}  // namespace brisk
