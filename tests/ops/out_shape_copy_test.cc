// Out-variant kernels of ops_cpu/out_variant/shape_copy.cc against the interpreter.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

TEST(OutShapeCopy, Cat) {
  OpTester(R"IR(
graph(%a : Tensor, %b : Tensor):
  %l : Tensor[] = prim::ListConstruct(%a, %b, %a)
  %d : int = prim::Constant[value=1]()
  %y : Tensor = aten::cat(%l, %d)
  return (%y)
)IR")
      .inputs({at::randn({2, 3}), at::randn({2, 1}).to(at::kDouble)})  // promotion
      .inputs({at::randn({5, 4}), at::randn({5, 7}).to(at::kDouble)})
      .expectKernel("aten::cat", kOut)
      .run();
}

TEST(OutShapeCopy, CatChannelsLast) {
  OpTester(R"IR(
graph(%a : Tensor, %b : Tensor):
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %d : int = prim::Constant[value=1]()
  %y : Tensor = aten::cat(%l, %d)
  return (%y)
)IR")
      .inputs({at::randn({1, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast),
               at::randn({1, 2, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({2, 3, 6, 5}).contiguous(at::MemoryFormat::ChannelsLast),
               at::randn({2, 5, 6, 5}).contiguous(at::MemoryFormat::ChannelsLast)})
      .expectKernel("aten::cat", kOut)
      .run();
}

TEST(OutShapeCopy, Stack) {
  OpTester(R"IR(
graph(%a : Tensor, %b : Tensor):
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %d : int = prim::Constant[value=-1]()
  %y : Tensor = aten::stack(%l, %d)
  return (%y)
)IR")
      .inputs({at::randn({2, 3}), at::randn({2, 3})})
      .inputs({at::randn({5, 4}), at::randn({5, 4})})
      .expectKernel("aten::stack", kOut)
      .run();
}

TEST(OutShapeCopy, ClonePreserve) {
  OpTester(R"IR(
graph(%a : Tensor):
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::clone(%a, %none)
  return (%y)
)IR")
      .inputs({at::randn({2, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({3, 5, 4, 2}).transpose(1, 2)})
      .expectKernel("aten::clone", kOut)
      .run();
}

TEST(OutShapeCopy, CloneContiguous) {
  OpTester(R"IR(
graph(%a : Tensor):
  %mf : int = prim::Constant[value=0]()
  %y : Tensor = aten::clone(%a, %mf)
  return (%y)
)IR")
      .inputs({at::randn({2, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({3, 5, 4, 2}).transpose(1, 2)})
      .expectKernel("aten::clone", kOut)
      .run();
}

TEST(OutShapeCopy, ZerosLike) {
  OpTester(R"IR(
graph(%a : Tensor):
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::zeros_like(%a, %none, %none, %none, %none, %none)
  return (%y)
)IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({5, 4}).t()})
      .expectKernel("aten::zeros_like", kOut)
      .run();
}

TEST(OutShapeCopy, ZerosLikeDtype) {
  OpTester(R"IR(
graph(%a : Tensor):
  %none : NoneType = prim::Constant()
  %dt : int = prim::dtype(%a)
  %y : Tensor = aten::zeros_like(%a, %dt, %none, %none, %none, %none)
  return (%y)
)IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({5, 4})})
      .expectKernel("aten::zeros_like", kOut)
      .run();
  OpTester(R"IR(
graph(%a : Tensor):
  %none : NoneType = prim::Constant()
  %dt : int = prim::Constant[value=4]()
  %y : Tensor = aten::zeros_like(%a, %dt, %none, %none, %none, %none)
  return (%y)
)IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({5, 4})})
      .expectKernel("aten::zeros_like", kOut)
      .run();
}

// triu as a causal mask builds it: a square of -inf above the diagonal, also with other
// diagonals, batched, integer and non-contiguous inputs.
TEST(OutShapeCopy, Triu) {
  const char* ir =
      "graph(%a : Tensor, %d : int):\n"
      "  %c : Tensor = aten::triu(%a, %d)\n"
      "  return (%c)\n";
  OpTester(ir)
      .inputs({at::full({4, 4}, -std::numeric_limits<float>::infinity()), c10::IValue(int64_t{1})})
      .inputs({at::randn({8, 9}).t(), c10::IValue(int64_t{2})})
      .expectKernel("aten::triu", kOut)
      .run();
  OpTester(ir)
      .inputs({at::randn({2, 5, 7}), c10::IValue(int64_t{0})})
      .inputs({at::randn({3, 6, 2}), c10::IValue(int64_t{-1})})
      .expectKernel("aten::triu", kOut)
      .run();
  OpTester(ir)
      .inputs({at::randint(0, 9, {6, 3}, at::kLong), c10::IValue(int64_t{-1})})
      .inputs({at::randint(0, 9, {2, 8}, at::kLong), c10::IValue(int64_t{3})})
      .expectKernel("aten::triu", kOut)
      .run();
}

// _to_copy(x, dtype, layout, device, pin_memory, non_blocking, memory_format) (core
// ATen IR): dtype, layout, device and format as export writes them; exact.
std::string toCopyIR(const std::string& dtype, const std::string& format) {
  return "graph(%x : Tensor):\n"
         "  %dt : " + std::string(dtype == "None" ? "NoneType = prim::Constant()" : "int = prim::Constant[value=" + dtype + "]()") +
         "\n  %lay : int = prim::Constant[value=0]()\n"
         "  %dev : Device = prim::Constant[value=\"cpu\"]()\n"
         "  %none : NoneType = prim::Constant()\n"
         "  %nb : bool = prim::Constant[value=0]()\n"
         "  %mf : " + std::string(format == "None" ? "NoneType = prim::Constant()" : "int = prim::Constant[value=" + format + "]()") +
         "\n  %y : Tensor = aten::_to_copy(%x, %dt, %lay, %dev, %none, %nb, %mf)\n"
         "  return (%y)\n";
}

TEST(OutShapeCopy, ToCopy) {
  // dtype: None, Double (7), Long (4); format: None, Preserve (1), Contiguous (0).
  for (const char* dtype : {"None", "7", "4"}) {
    for (const char* format : {"None", "1", "0"}) {
      SCOPED_TRACE(std::string("dtype ") + dtype + ", format " + format);
      OpTester(toCopyIR(dtype, format))
          .inputs({at::randn({2, 3, 4, 2}) * 5})
          .inputs({at::randn({3, 5, 4, 2}).contiguous(at::MemoryFormat::ChannelsLast) * 5})
          .tolerance(Tolerance{0, 0, 0})
          .expectKernel("aten::_to_copy", kOut)
          .run();
      OpTester(toCopyIR(dtype, format))
          .inputs({at::randn({6, 4}).t() * 5})
          .inputs({at::randn({5, 8}).slice(1, 0, 8, 2) * 5})  // not dense
          .tolerance(Tolerance{0, 0, 0})
          .expectKernel("aten::_to_copy", kOut)
          .run();
    }
  }
}

// dropout in eval mode (torch.export's default IR): identity, as a copy.
TEST(OutShapeCopy, DropoutEval) {
  OpTester(
      "graph(%x : Tensor):\n"
      "  %p : float = prim::Constant[value=0.1]()\n"
      "  %t : bool = prim::Constant[value=0]()\n"
      "  %y : Tensor = aten::dropout(%x, %p, %t)\n"
      "  %z : Tensor = aten::dropout(%y, %p, %t)\n"
      "  return (%z)\n")
      .inputs({at::randn({6, 4}).t()})
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({5, 7})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::dropout", kOut)
      .run();
}

}  // namespace
}  // namespace brisk::testing
