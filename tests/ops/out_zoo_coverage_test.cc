// Which zoo nodes the out-variant kernels serve: every node of an op that has an
// out-variant kernel must get it (no silent decline on the zoo's argument
// combinations); prints the ops left to other kernels.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/module.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

// Ops the zoo uses that the out-variant kernels must serve, per model.
const std::map<std::string, std::set<std::string>>& expected() {
  static const std::map<std::string, std::set<std::string>> m = {
      {"resnet18",
       {"aten::conv2d", "aten::relu", "aten::max_pool2d", "aten::add.Tensor", "aten::adaptive_avg_pool2d",
        "aten::linear"}},
      {"mobilenet_v2", {"aten::conv2d", "aten::hardtanh", "aten::add.Tensor", "aten::adaptive_avg_pool2d", "aten::linear"}},
      {"mlp", {"aten::linear", "aten::relu"}},
      {"deepandwide",
       {"aten::linear", "aten::relu", "aten::embedding_bag.padding_idx", "aten::cat", "aten::sigmoid"}},
      {"transformer",
       {"aten::linear", "aten::masked_fill.Scalar", "aten::div.Scalar", "aten::baddbmm", "aten::bmm",
        "aten::softmax.int", "aten::add.Tensor", "aten::layer_norm", "aten::relu", "aten::logical_or",
        "aten::logical_not", "aten::zeros_like"}},
      {"inception_nofork", {"aten::conv2d", "aten::relu", "aten::cat"}},
      {"control_flow",
       {"aten::sum", "aten::gt.Scalar", "aten::linear", "aten::tanh", "aten::neg", "aten::cat", "aten::mul.Scalar",
        "aten::add.Tensor", "aten::stack", "aten::sum.dim_IntList"}},
      {"multi_output", {"aten::linear", "aten::add.Tensor", "aten::mul.Scalar", "aten::relu", "aten::sum.dim_IntList"}},
      {"chain_mul100", {"aten::mul.Scalar", "aten::mul.Tensor"}},
      {"chain_add100", {"aten::add.Scalar", "aten::add.Tensor"}},
  };
  return m;
}

class OutZooCoverage : public ::testing::TestWithParam<std::string> {};

TEST_P(OutZooCoverage, KeyOpsAreOutVariants) {
  const std::string& model = GetParam();
  auto m = Module::load(testing::zooModel(model), Options{});
  std::set<std::string> fallback_ops;
  std::set<std::string> seen;
  for (const NodeKernelInfo& info : m->kernelReport()) {
    if (info.kind == KernelKind::kFallback) fallback_ops.insert(info.op);
    if (!expected().at(model).count(info.op)) continue;
    seen.insert(info.op);
    // conv2d: a direct-call kernel of kind native (libtorch has no real out form).
    const KernelKind want = info.op == "aten::conv2d" ? KernelKind::kNative : KernelKind::kOutVariant;
    EXPECT_EQ(info.kind, want) << model << ": " << info.node << " -> " << info.provider;
    EXPECT_EQ(info.provider, "ops_cpu") << model << ": " << info.node;
  }
  for (const std::string& op : expected().at(model)) EXPECT_TRUE(seen.count(op)) << model << " has no " << op;
  std::string list;
  for (const std::string& op : fallback_ops) list += " " + op;
  std::cout << model << " fallback ops:" << (list.empty() ? " (none)" : list) << "\n";
}

INSTANTIATE_TEST_SUITE_P(Zoo, OutZooCoverage,
                         ::testing::Values("resnet18", "mobilenet_v2", "mlp", "deepandwide", "transformer",
                                           "inception_nofork", "control_flow", "multi_output", "chain_mul100",
                                           "chain_add100"));

}  // namespace
}  // namespace brisk
