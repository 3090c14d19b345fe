// Out-variant kernels of ops_cpu/out_variant/embedding.cc against the interpreter.
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

// embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
//               per_sample_weights, include_last_offset[, padding_idx]) -> output 0 only.
std::string bagIR(int mode, bool include_last, const std::string& padding /* "" = old schema */) {
  std::string ir =
      "graph(%w : Tensor, %i : Tensor, %o : Tensor):\n"
      "  %f : bool = prim::Constant[value=0]()\n"
      "  %last : bool = prim::Constant[value=" +
      std::to_string(include_last ? 1 : 0) +
      "]()\n"
      "  %mode : int = prim::Constant[value=" +
      std::to_string(mode) +
      "]()\n"
      "  %none : NoneType = prim::Constant()\n";
  if (!padding.empty()) ir += "  %pad : " + std::string(padding == "None" ? "NoneType = prim::Constant()" : "int = prim::Constant[value=" + padding + "]()") + "\n";
  ir += "  %y : Tensor, %a : Tensor, %b : Tensor, %c : Tensor = aten::embedding_bag(%w, %i, %o, %f, %mode, %f, %none, %last" +
        std::string(padding.empty() ? "" : ", %pad") + ")\n  return (%y)\n";
  return ir;
}

// ids [n] with some zeros (the padding row), offsets [bags] (with the end when include_last).
std::vector<c10::IValue> bagInputs(const at::Tensor& w, int64_t bags, int64_t per_bag, bool include_last,
                                   at::ScalarType it = at::kLong) {
  at::Tensor ids = at::randint(0, w.size(0), {bags * per_bag}, it);
  ids.index_put_({at::arange(0, bags * per_bag, 3)}, 0);
  at::Tensor off = at::arange(0, include_last ? bags * per_bag + 1 : bags * per_bag, per_bag, it);
  if (bags > 2) {  // one empty bag and one longer bag
    off = off.clone();
    off[2] = off[1];
  }
  return {w, ids, off};
}

TEST(OutEmbedding, EmbeddingBagSum) {
  at::Tensor w = at::randn({50, 8});
  OpTester(bagIR(0, false, ""))
      .inputs(bagInputs(w, 1, 10, false))
      .inputs(bagInputs(w, 6, 4, false))
      .expectKernel("aten::embedding_bag", kOut)
      .run();
}

TEST(OutEmbedding, EmbeddingBagMeanIncludeLast) {
  at::Tensor w = at::randn({50, 8});
  OpTester(bagIR(1, true, ""))
      .inputs(bagInputs(w, 2, 3, true))
      .inputs(bagInputs(w, 7, 5, true))
      .expectKernel("aten::embedding_bag", kOut)
      .run();
}

TEST(OutEmbedding, EmbeddingBagPaddingIdxSum) {
  at::Tensor w = at::randn({50, 16});
  OpTester(bagIR(0, false, "0"))
      .inputs(bagInputs(w, 1, 10, false))
      .inputs(bagInputs(w, 32, 10, false))
      .expectKernel("aten::embedding_bag.padding_idx", kOut)
      .run();
}

TEST(OutEmbedding, EmbeddingBagPaddingIdxMeanInt32) {
  at::Tensor w = at::randn({50, 16});
  OpTester(bagIR(1, false, "0"))
      .inputs(bagInputs(w, 1, 10, false, at::kInt))
      .inputs(bagInputs(w, 32, 10, false, at::kInt))
      .expectKernel("aten::embedding_bag.padding_idx", kOut)
      .run();
}

TEST(OutEmbedding, EmbeddingBagPaddingIdxNegativeAndNone) {
  at::Tensor w = at::randn({50, 4});
  OpTester(bagIR(1, false, "-50"))  // wraps to row 0
      .inputs(bagInputs(w, 3, 4, false))
      .inputs(bagInputs(w, 9, 4, false))
      .expectKernel("aten::embedding_bag.padding_idx", kOut)
      .run();
  OpTester(bagIR(0, false, "None"))
      .inputs(bagInputs(w, 3, 4, false))
      .inputs(bagInputs(w, 9, 4, false))
      .expectKernel("aten::embedding_bag.padding_idx", kOut)
      .run();
}

TEST(OutEmbedding, EmbeddingBagMaxModeUsesOtherKernel) {
  // Max mode is not implemented here: the factory declines, the node still matches.
  at::Tensor w = at::randn({50, 4});
  OpTester(bagIR(2, false, "0"))
      .inputs(bagInputs(w, 3, 4, false))
      .inputs(bagInputs(w, 9, 4, false))
      .run();
}

TEST(OutEmbedding, EmbeddingBagSideOutputsUsedDeclines) {
  at::Tensor w = at::randn({50, 4});
  OpTester(R"IR(
graph(%w : Tensor, %i : Tensor, %o : Tensor):
  %f : bool = prim::Constant[value=0]()
  %mode : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %y : Tensor, %a : Tensor, %b : Tensor, %c : Tensor = aten::embedding_bag(%w, %i, %o, %f, %mode, %f, %none, %f)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%y, %b)
  return (%t)
)IR")
      .inputs(bagInputs(w, 3, 4, false))
      .inputs(bagInputs(w, 9, 4, false))
      .expectKernel("aten::embedding_bag", KernelKind::kFallback)
      .run();
}

}  // namespace
}  // namespace brisk::testing
