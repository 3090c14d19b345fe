// embedding_bag / _embedding_bag (ops_cpu/out_variant/embedding_bag.cc) against the
// interpreter running ATen's op: modes sum / mean / max, empty bags, include_last_offset,
// padding_idx (given, negative, None), per_sample_weights, int32 / int64 indices, float /
// double weights, non-contiguous inputs; malformed ones raise ATen's error.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "core/executor/module.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

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

TEST(OutEmbeddingBag, EmbeddingBagSum) {
  at::Tensor w = at::randn({50, 8});
  OpTester(bagIR(0, false, ""))
      .inputs(bagInputs(w, 1, 10, false))
      .inputs(bagInputs(w, 6, 4, false))
      .expectKernel("aten::embedding_bag", kOut)
      .run();
}

TEST(OutEmbeddingBag, EmbeddingBagMeanIncludeLast) {
  at::Tensor w = at::randn({50, 8});
  OpTester(bagIR(1, true, ""))
      .inputs(bagInputs(w, 2, 3, true))
      .inputs(bagInputs(w, 7, 5, true))
      .expectKernel("aten::embedding_bag", kOut)
      .run();
}

TEST(OutEmbeddingBag, EmbeddingBagPaddingIdxSum) {
  at::Tensor w = at::randn({50, 16});
  OpTester(bagIR(0, false, "0"))
      .inputs(bagInputs(w, 1, 10, false))
      .inputs(bagInputs(w, 32, 10, false))
      .expectKernel("aten::embedding_bag.padding_idx", kOut)
      .run();
}

TEST(OutEmbeddingBag, EmbeddingBagPaddingIdxMeanInt32) {
  at::Tensor w = at::randn({50, 16});
  OpTester(bagIR(1, false, "0"))
      .inputs(bagInputs(w, 1, 10, false, at::kInt))
      .inputs(bagInputs(w, 32, 10, false, at::kInt))
      .expectKernel("aten::embedding_bag.padding_idx", kOut)
      .run();
}

TEST(OutEmbeddingBag, EmbeddingBagPaddingIdxNegativeAndNone) {
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

TEST(OutEmbeddingBag, EmbeddingBagMaxPaddingIdx) {
  at::Tensor w = at::randn({50, 4});
  OpTester(bagIR(2, false, "0"))
      .inputs(bagInputs(w, 3, 4, false))
      .inputs(bagInputs(w, 9, 4, false))
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::embedding_bag.padding_idx", kOut)
      .run();
}

TEST(OutEmbeddingBag, EmbeddingBagSideOutputsUsedDeclines) {
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

// --- _embedding_bag (core ATen IR) --------------------------------------------------

// _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
//                per_sample_weights, include_last_offset, padding_idx) -> output 0 only;
// per_sample_weights is the graph's fourth input when `psw`.
std::string underscoreIR(int mode, bool include_last, int64_t padding, bool psw) {
  return "graph(%w : Tensor, %i : Tensor, %o : Tensor" + std::string(psw ? ", %psw : Tensor" : "") +
         "):\n"
         "  %f : bool = prim::Constant[value=0]()\n"
         "  %last : bool = prim::Constant[value=" + std::to_string(include_last ? 1 : 0) + "]()\n"
         "  %mode : int = prim::Constant[value=" + std::to_string(mode) + "]()\n"
         "  %pad : int = prim::Constant[value=" + std::to_string(padding) + "]()\n" +
         (psw ? "" : "  %psw : NoneType = prim::Constant()\n") +
         "  %y : Tensor, %a : Tensor, %b : Tensor, %c : Tensor = aten::_embedding_bag(%w, %i, %o, %f, %mode, %f, "
         "%psw, %last, %pad)\n"
         "  return (%y)\n";
}

std::vector<c10::IValue> withWeights(std::vector<c10::IValue> in) {
  const at::Tensor& w = in[0].toTensor();
  in.push_back(at::randn({in[1].toTensor().numel()}, w.options()));
  return in;
}

// Every mode, with and without the last offset, padding none (-1) / row 0 / a row no
// index uses, both index and weight dtypes: bit-exact (same order of additions as ATen).
TEST(OutEmbeddingBag, UnderscoreModesPaddingDtypes) {
  for (int mode : {0, 1, 2}) {
    for (bool last : {false, true}) {
      for (int64_t pad : {-1, 0, 49}) {
        for (auto wt : {at::kFloat, at::kDouble}) {
          for (auto it : {at::kLong, at::kInt}) {
            SCOPED_TRACE("mode " + std::to_string(mode) + (last ? " last" : "") + " pad " + std::to_string(pad) + " " +
                         c10::toString(wt) + " " + c10::toString(it));
            at::Tensor w = at::randn({50, 8}, wt);
            OpTester(underscoreIR(mode, last, pad, false))
                .inputs(bagInputs(w, 1, 10, last, it))
                .inputs(bagInputs(w, 6, 4, last, it))
                .inputs(bagInputs(w, 40, 3, last, it))
                .tolerance(Tolerance{0, 0, 0})
                .expectKernel("aten::_embedding_bag", kOut)
                .run();
          }
        }
      }
    }
  }
}

// Empty bags (all, and several in a row), no indices at all, one bag of padding only.
TEST(OutEmbeddingBag, UnderscoreEmptyBags) {
  at::Tensor w = at::randn({10, 5});
  auto L = [](std::vector<int64_t> v) { return at::tensor(v, at::kLong); };
  for (int mode : {0, 1, 2}) {
    SCOPED_TRACE("mode " + std::to_string(mode));
    OpTester(underscoreIR(mode, false, 3, false))
        .inputs({w, L({1, 2, 3, 3}), L({0, 0, 0, 2, 2})})  // bags 0, 1, 3 empty; bag 4 = padding only
        .inputs({w, at::empty({0}, at::kLong), L({0, 0})})
        .inputs({w, L({4}), L({0})})
        .tolerance(Tolerance{0, 0, 0})
        .expectKernel("aten::_embedding_bag", kOut)
        .run();
    OpTester(underscoreIR(mode, true, -1, false))
        .inputs({w, L({1, 2, 9}), L({0, 0, 3, 3})})
        .inputs({w, at::empty({0}, at::kLong), L({0})})  // no bags
        .tolerance(Tolerance{0, 0, 0})
        .expectKernel("aten::_embedding_bag", kOut)
        .run();
  }
}

// Max: ties keep the first row's value, -inf and large values, every bag's rows equal.
TEST(OutEmbeddingBag, UnderscoreMaxExtremes) {
  at::Tensor w = at::randn({6, 3});
  w[1] = -std::numeric_limits<float>::infinity();
  w[2] = 1e30;
  w[3] = w[0];
  auto L = [](std::vector<int64_t> v) { return at::tensor(v, at::kLong); };
  OpTester(underscoreIR(2, false, -1, false))
      .inputs({w, L({1, 1, 0, 3, 2, 5, 1}), L({0, 2, 4, 5})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::_embedding_bag", kOut)
      .run();
}

// per_sample_weights (mode sum only, as in ATen): one fused multiply-add per row, in
// index order, as ATen's kernel does; padding rows skipped.
TEST(OutEmbeddingBag, UnderscorePerSampleWeights) {
  for (auto wt : {at::kFloat, at::kDouble}) {
    for (int64_t pad : {-1, 0}) {
      SCOPED_TRACE(std::string(c10::toString(wt)) + " pad " + std::to_string(pad));
      at::Tensor w = at::randn({50, 16}, wt);
      OpTester(underscoreIR(0, false, pad, true))
          .inputs(withWeights(bagInputs(w, 1, 10, false)))
          .inputs(withWeights(bagInputs(w, 12, 7, false)))
          .tolerance(Tolerance{1e-6, 1e-7, 1e-7})
          .expectKernel("aten::_embedding_bag", kOut)
          .run();
    }
  }
}

// Non-contiguous indices / offsets / weights (deepandwide selects one table's ids out of
// a [tables, n] tensor), a transposed (non-contiguous) weight.
TEST(OutEmbeddingBag, UnderscoreNonContiguous) {
  at::Tensor w = at::randn({50, 8});
  auto in = bagInputs(w, 6, 4, false);
  at::Tensor ids2 = at::stack({in[1].toTensor(), in[1].toTensor().flip(0)}, 1);  // [n, 2]
  at::Tensor off2 = at::stack({in[2].toTensor(), in[2].toTensor()}, 1);
  OpTester(underscoreIR(1, false, 0, false))
      .inputs({w, ids2.select(1, 1), off2.select(1, 0)})
      .inputs({at::randn({8, 50}).t(), ids2.select(1, 0), off2.select(1, 1)})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::_embedding_bag", kOut)
      .run();
  OpTester(underscoreIR(0, false, 0, true))
      .inputs({w, ids2.select(1, 1), off2.select(1, 0), at::randn({48}).slice(0, 0, 48, 2)})
      .inputs({at::randn({8, 50}).t(), ids2.select(1, 0), off2.select(1, 1), at::randn({24})})
      .tolerance(Tolerance{1e-6, 1e-7, 1e-7})
      .expectKernel("aten::_embedding_bag", kOut)
      .run();
}

// Malformed inputs raise ATen's error (through ATen's op), and the module still runs.
TEST(OutEmbeddingBag, UnderscoreBadInputsRaiseAtensError) {
  auto L = [](std::vector<int64_t> v) { return at::tensor(v, at::kLong); };
  at::Tensor w = at::randn({10, 4});
  Options loose;
  loose.strict_inputs = false;
  auto m = Module::fromIR(underscoreIR(0, false, -1, false), loose, "bags");
  EXPECT_ANY_THROW(m->run({w, L({1, 10}), L({0})}));        // index out of range
  EXPECT_ANY_THROW(m->run({w, L({1, -1}), L({0})}));        // negative index
  EXPECT_ANY_THROW(m->run({w, L({1, 2}), L({0, 3})}));      // offset beyond the indices
  // Mixed index dtypes: ATen promotes them (its op serves them).
  EXPECT_TRUE(at::equal(m->run({w, L({1, 2}), at::tensor({0, 1}, at::kInt)}).toTensor(), at::stack({w[1], w[2]})));
  EXPECT_TRUE(at::equal(m->run({w, L({1, 2}), L({0, 1})}).toTensor(), at::stack({w[1], w[2]})));
  auto mean = Module::fromIR(underscoreIR(1, false, -1, true), loose, "bags");
  EXPECT_ANY_THROW(mean->run({w, L({1, 2}), L({0, 1}), at::ones({2})}));  // weights need mode sum
}

}  // namespace
}  // namespace brisk::testing
