// Out-variant kernels of ops_cpu/out_variant/embedding.cc against the interpreter (the
// bags: out_embedding_bag_test.cc).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

TEST(OutEmbedding, Embedding) {
  const char* ir = R"IR(
graph(%w : Tensor, %i : Tensor):
  %p : int = prim::Constant[value=-1]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::embedding(%w, %i, %p, %f, %f)
  return (%y)
)IR";
  at::Tensor w = at::randn({20, 6});
  OpTester(ir)
      .inputs({w, at::randint(0, 20, {2, 3}, at::kLong)})
      .inputs({w, at::randint(0, 20, {5, 9}, at::kLong)})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::embedding", kOut)
      .run();
  OpTester(ir)
      .inputs({w, at::randint(0, 20, {4}, at::kInt)})
      .inputs({w, at::randint(0, 20, {11}, at::kInt)})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::embedding", kOut)
      .run();
}

}  // namespace
}  // namespace brisk::testing
