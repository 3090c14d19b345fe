// conv1d (conv.cc), group_norm (norms.cc) and einsum (einsum.cc): ATen's own op with
// its result placed in the memory plan (captured.h), against the interpreter. Same
// kernel, same arguments: the results must match bit for bit, planned or not.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;
const Tolerance kExact{0, 0, 0};

Options unplanned() {
  Options o;
  o.memory_planning = false;
  return o;
}

std::string conv1dIR(const std::string& stride, const std::string& pad, const std::string& dil, int64_t groups) {
  return "graph(%x : Tensor):\n" + constTensorIR("w", {6, 6 / groups, 3}) + constTensorIR("b", {6}) +
         "  %s : int[] = prim::Constant[value=" + stride + "]()\n  %p : int[] = prim::Constant[value=" + pad +
         "]()\n  %d : int[] = prim::Constant[value=" + dil + "]()\n  %g : int = prim::Constant[value=" +
         std::to_string(groups) + "]()\n  %y : Tensor = aten::conv1d(%x, %w, %b, %s, %p, %d, %g)\n  return (%y)\n";
}

TEST(OutCapture, Conv1d) {
  OpTester(conv1dIR("[1]", "[0]", "[1]", 1))
      .inputs({at::randn({1, 6, 9})})
      .inputs({at::randn({4, 6, 20})})
      .inputs({at::randn({20, 6, 2}).permute({2, 1, 0})})  // non-contiguous
      .inputs({at::randn({6, 7})})                          // unbatched: conv1d's own handling
      .tolerance(kExact)
      .expectKernel("aten::conv1d", kOut)
      .run();
}

TEST(OutCapture, Conv1dStridedPaddedDilatedGrouped) {
  OpTester(conv1dIR("[2]", "[2]", "[2]", 3))
      .inputs({at::randn({2, 6, 11})})
      .inputs({at::randn({1, 6, 30})})
      .tolerance(kExact)
      .expectKernel("aten::conv1d", kOut)
      .run();
}

TEST(OutCapture, Conv1dUnplannedIsCaptured) {
  OpTester(conv1dIR("[1]", "[1]", "[1]", 2))
      .options(unplanned())
      .inputs({at::randn({2, 6, 8})})
      .tolerance(kExact)
      .expectKernel("aten::conv1d", kOut, OutputContract::kCaptured)
      .run();
}

std::string groupNormIR(int64_t c, int64_t groups, bool affine) {
  std::string ir = "graph(%x : Tensor):\n";
  ir += affine ? constTensorIR("w", {c}) + constTensorIR("b", {c})
               : "  %w : NoneType = prim::Constant()\n  %b : NoneType = prim::Constant()\n";
  return ir + "  %g : int = prim::Constant[value=" + std::to_string(groups) +
         "]()\n  %eps : float = prim::Constant[value=1e-05]()\n  %c : bool = prim::Constant[value=1]()\n"
         "  %y : Tensor = aten::group_norm(%x, %g, %w, %b, %eps, %c)\n  return (%y)\n";
}

TEST(OutCapture, GroupNorm) {
  OpTester(groupNormIR(6, 3, true))
      .inputs({at::randn({2, 6, 5})})
      .inputs({at::randn({1, 6, 4, 7}) * 30 + 5})  // large values: the tolerance is zero anyway
      .inputs({at::randn({3, 6})})
      .inputs({at::randn({2, 6, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({6, 2, 3}).permute({1, 0, 2})})  // non-contiguous
      .tolerance(kExact)
      .expectKernel("aten::group_norm", kOut)
      .run();
}

TEST(OutCapture, GroupNormNoAffine) {
  OpTester(groupNormIR(4, 1, false))
      .inputs({at::randn({2, 4, 3, 3})})
      .inputs({at::randn({1, 4, 2}).to(at::kDouble)})
      .tolerance(kExact)
      .expectKernel("aten::group_norm", kOut)
      .run();
}

std::string einsumIR(const std::string& eq, int operands) {
  std::string ir = "graph(%a : Tensor, %b : Tensor):\n  %eq : str = prim::Constant[value=\"" + eq + "\"]()\n";
  ir += operands == 2 ? "  %l : Tensor[] = prim::ListConstruct(%a, %b)\n" : "  %l : Tensor[] = prim::ListConstruct(%a)\n";
  return ir + "  %none : NoneType = prim::Constant()\n  %y : Tensor = aten::einsum(%eq, %l, %none)\n  return (%y)\n";
}

TEST(OutCapture, EinsumBatchedMatmul) {
  OpTester(einsumIR("bij,bjk->bik", 2))
      .inputs({at::randn({2, 3, 4}), at::randn({2, 4, 5})})
      .inputs({at::randn({5, 7, 2}), at::randn({5, 2, 3})})
      .inputs({at::randn({4, 3, 2}).transpose(0, 2), at::randn({2, 4, 6})})  // non-contiguous
      .tolerance(kExact)
      .expectKernel("aten::einsum", kOut)
      .run();
}

TEST(OutCapture, EinsumAttentionScoresAndOuter) {
  OpTester(einsumIR("bhqd,bhkd->bhqk", 2))
      .inputs({at::randn({1, 2, 3, 4}), at::randn({1, 2, 5, 4})})
      .inputs({at::randn({2, 3, 4, 8}), at::randn({2, 3, 6, 8})})
      .tolerance(kExact)
      .expectKernel("aten::einsum", kOut)
      .run();
  OpTester(einsumIR("i,j->ij", 2))
      .inputs({at::randn({3}), at::randn({4})})
      .inputs({at::randn({6}), at::randn({2})})
      .tolerance(kExact)
      .expectKernel("aten::einsum", kOut)
      .run();
}

TEST(OutCapture, EinsumOneOperandAndUnplanned) {
  OpTester(einsumIR("ii->i", 1))  // a diagonal: ATen returns a view of the operand
      .inputs({at::randn({3, 3}), at::randn({1})})
      .inputs({at::randn({5, 5}), at::randn({1})})
      .tolerance(kExact)
      .expectKernel("aten::einsum", kOut)
      .run();
  OpTester(einsumIR("bij->bj", 1))  // a sum
      .options(unplanned())
      .inputs({at::randn({2, 3, 4}), at::randn({1})})
      .tolerance(kExact)
      .expectKernel("aten::einsum", kOut, OutputContract::kCaptured)
      .run();
}

}  // namespace
}  // namespace brisk::testing
