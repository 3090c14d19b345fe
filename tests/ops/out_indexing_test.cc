// Out-variant kernels of ops_cpu/out_variant/indexing.cc (gather, index_select,
// index_add, topk, roll) against the interpreter. They call ATen's own CPU kernels or
// copy elements, so results must match bit for bit.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;
const Tolerance kExact{0, 0, 0};

at::Tensor idx(std::vector<int64_t> shape, int64_t high) { return at::randint(high, shape, at::kLong); }

TEST(OutIndexing, Gather) {
  OpTester(R"IR(
graph(%x : Tensor, %i : Tensor):
  %d : int = prim::Constant[value=-1]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::gather(%x, %d, %i, %f)
  return (%y)
)IR")
      .inputs({at::randn({3, 5}), idx({3, 4}, 5)})
      .inputs({at::randn({6, 7}), idx({2, 9}, 7)})  // index smaller than self in dim 0
      .inputs({at::randn({7, 6}).t(), idx({6, 3}, 7)})  // non-contiguous self
      .inputs({at::arange(12).view({3, 4}), idx({3, 2}, 4)})  // int64 values
      .tolerance(kExact)
      .expectKernel("aten::gather", kOut)
      .run();
}

TEST(OutIndexing, GatherDim0NonContiguousIndex) {
  OpTester(R"IR(
graph(%x : Tensor, %i : Tensor):
  %d : int = prim::Constant[value=0]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::gather(%x, %d, %i, %f)
  return (%y)
)IR")
      .inputs({at::randn({4, 3, 2}), idx({2, 3, 4}, 4).transpose(0, 2)})
      .inputs({at::randn({2, 2, 2}), idx({1, 2, 2}, 2)})
      .tolerance(kExact)
      .expectKernel("aten::gather", kOut)
      .run();
}

TEST(OutIndexing, IndexSelect) {
  OpTester(R"IR(
graph(%x : Tensor, %i : Tensor, %d : int):
  %y : Tensor = aten::index_select(%x, %d, %i)
  return (%y)
)IR")
      .inputs({at::randn({4, 5}), idx({3}, 4), c10::IValue(int64_t{0})})
      .inputs({at::randn({4, 5, 6}), idx({8}, 6), c10::IValue(int64_t{-1})})
      .inputs({at::randn({6, 5}).t(), idx({2}, 6), c10::IValue(int64_t{1})})  // non-contiguous
      .inputs({at::randn({3, 4}), idx({5}, 3).to(at::kInt), c10::IValue(int64_t{0})})  // int32 index
      .inputs({at::randn({2, 3}), idx({0}, 3), c10::IValue(int64_t{1})})  // empty index
      .tolerance(kExact)
      .expectKernel("aten::index_select", kOut)
      .run();
}

TEST(OutIndexing, IndexAdd) {
  OpTester(R"IR(
graph(%x : Tensor, %i : Tensor, %s : Tensor):
  %d : int = prim::Constant[value=1]()
  %a : int = prim::Constant[value=2]()
  %y : Tensor = aten::index_add(%x, %d, %i, %s, %a)
  return (%y)
)IR")
      .inputs({at::randn({3, 5}), at::tensor({0, 4, 0}, at::kLong), at::randn({3, 3})})  // repeated index
      .inputs({at::randn({2, 6, 2}), idx({4}, 6), at::randn({2, 4, 2})})
      .inputs({at::randn({5, 3}).t(), idx({2}, 5), at::randn({2, 3}).t()})  // non-contiguous
      .tolerance(kExact)
      .expectKernel("aten::index_add", kOut)
      .run();
}

TEST(OutIndexing, IndexAddNegativeDimFloatAlpha) {
  OpTester(R"IR(
graph(%x : Tensor, %i : Tensor, %s : Tensor, %a : float):
  %d : int = prim::Constant[value=-2]()
  %y : Tensor = aten::index_add(%x, %d, %i, %s, %a)
  return (%y)
)IR")
      .inputs({at::randn({4, 3}), idx({6}, 4), at::randn({6, 3}), c10::IValue(0.5)})
      .inputs({at::randn({2, 7, 3}), idx({2}, 7), at::randn({2, 2, 3}), c10::IValue(-1.5)})
      .tolerance(kExact)
      .expectKernel("aten::index_add", kOut)
      .run();
}

TEST(OutIndexing, TopkBothOutputs) {
  OpTester(R"IR(
graph(%x : Tensor, %k : int):
  %d : int = prim::Constant[value=-1]()
  %t : bool = prim::Constant[value=1]()
  %v : Tensor, %i : Tensor = aten::topk(%x, %k, %d, %t, %t)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%v, %i)
  return (%out)
)IR")
      .inputs({at::randn({3, 10}), c10::IValue(int64_t{4})})
      .inputs({at::randn({2, 4, 20}), c10::IValue(int64_t{7})})
      .inputs({at::randn({9, 5}).t(), c10::IValue(int64_t{2})})  // non-contiguous
      .inputs({at::randn({1, 3}), c10::IValue(int64_t{1})})
      .tolerance(kExact)
      .expectKernel("aten::topk", kOut)
      .run();
}

TEST(OutIndexing, TopkSmallestDim0IntValues) {
  OpTester(R"IR(
graph(%x : Tensor):
  %k : int = prim::Constant[value=2]()
  %d : int = prim::Constant[value=0]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %v : Tensor, %i : Tensor = aten::topk(%x, %k, %d, %f, %t)
  %out : (Tensor, Tensor) = prim::TupleConstruct(%v, %i)
  return (%out)
)IR")
      .inputs({at::randperm(20, at::kLong).view({5, 4})})
      .inputs({at::randn({6, 3, 2})})
      .tolerance(kExact)
      .expectKernel("aten::topk", kOut)
      .run();
}

// `dims` "" is the empty list (which the IR has no constant syntax for).
std::string rollIR(const std::string& shifts, const std::string& dims) {
  const std::string d = dims.empty() ? "prim::ListConstruct()" : "prim::Constant[value=" + dims + "]()";
  return "graph(%x : Tensor):\n  %s : int[] = prim::Constant[value=" + shifts + "]()\n  %d : int[] = " + d +
         "\n  %y : Tensor = aten::roll(%x, %s, %d)\n  return (%y)\n";
}

TEST(OutIndexing, RollOneDim) {
  OpTester(rollIR("[2]", "[-1]"))
      .inputs({at::randn({3, 5})})
      .inputs({at::randn({2, 4, 7})})
      .inputs({at::randn({6, 3}).t()})          // non-contiguous
      .inputs({at::arange(4).view({2, 2})})     // shift larger than the dim, int64
      .inputs({at::randn({2, 0})})              // empty
      .tolerance(kExact)
      .expectKernel("aten::roll", kOut)
      .run();
}

TEST(OutIndexing, RollSeveralDimsNegativeShiftRepeatedDim) {
  OpTester(rollIR("[-1, 3, 1]", "[0, 1, -2]"))
      .inputs({at::randn({4, 5})})
      .inputs({at::randn({3, 6, 2}).transpose(0, 2)})
      .inputs({at::randn({7, 2, 3})})
      .tolerance(kExact)
      .expectKernel("aten::roll", kOut)
      .run();
}

// Shifts computed per run (Swin's shifted windows roll by -shift_size, a list built at
// run time).
TEST(OutIndexing, RollShiftsComputedPerRun) {
  OpTester(
      "graph(%x : Tensor, %s : int):\n"
      "  %m : int = aten::neg(%s)\n"
      "  %sh : int[] = prim::ListConstruct(%m, %s)\n"
      "  %d : int[] = prim::Constant[value=[1, 2]]()\n"
      "  %y : Tensor = aten::roll(%x, %sh, %d)\n"
      "  return (%y)\n")
      .inputs({at::randn({2, 5, 6, 3}), int64_t{2}})
      .inputs({at::randn({2, 4, 4, 3}), int64_t{7}})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::roll", KernelKind::kOutVariant)
      .run();
}

TEST(OutIndexing, RollFlattened) {
  OpTester(rollIR("[5]", ""))
      .inputs({at::randn({3, 4})})
      .inputs({at::randn({2, 3, 2})})
      .inputs({at::randn({4, 3}).t()})  // non-contiguous: ATen's op
      .tolerance(kExact)
      .expectKernel("aten::roll", kOut)
      .run();
}

}  // namespace
}  // namespace brisk::testing
