// Out-variant kernels of ops_cpu/out_variant/shape_copy.cc against the interpreter.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "core/executor/module.h"
#include "core/graph/graph.h"
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

// dropout in eval mode (torch.export's default IR): ATen returns the input itself.
// With in-place reuse on (the default) the node is marked and the kernel hands the
// input on (kNative); off, it copies into its own output. Values equal either way.
const char* kDropoutIR =
    "graph(%x : Tensor):\n"
    "  %p : float = prim::Constant[value=0.1]()\n"
    "  %t : bool = prim::Constant[value=0]()\n"
    "  %y : Tensor = aten::dropout(%x, %p, %t)\n"
    "  %z : Tensor = aten::dropout(%y, %p, %t)\n"
    "  return (%z)\n";

// The dropout kernels serve eval dropouts left in the graph: core's remove_eval_dropout
// (on by default) takes them out at load, so these tests turn it off.
Options keepDropout() {
  Options o;
  o.disabled_passes = {"remove_eval_dropout"};
  return o;
}

TEST(OutShapeCopy, DropoutEvalIsTheInput) {
  OpTester(kDropoutIR)
      .options(keepDropout())
      .inputs({at::randn({6, 4}).t()})
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({5, 7})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::dropout", kOut, OutputContract::kIntoInput)
      .run();
}

TEST(OutShapeCopy, DropoutEvalCopiesWithoutInPlaceReuse) {
  Options o = keepDropout();
  o.inplace_reuse = false;
  OpTester(kDropoutIR)
      .inputs({at::randn({6, 4}).t()})
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({5, 7})})
      .tolerance(Tolerance{0, 0, 0})
      .options(o)
      .expectKernel("aten::dropout", kOut)
      .run();
}

// The alias is planned: a's bytes stay reserved while d (= a) is read at the end,
// though a's own last reader is the dropout; the intermediates in between would
// otherwise be placed over it. And a mutation of the input shows through the result,
// as in ATen.
TEST(OutShapeCopy, DropoutEvalAliasIsPlanned) {
  OpTester(R"IR(
graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %a : Tensor = aten::mul(%x, %x)
  %d : Tensor = aten::dropout(%a, %p, %t)
  %c1 : Tensor = aten::mul(%x, %three)
  %c2 : Tensor = aten::add(%c1, %c1, %one)
  %c3 : Tensor = aten::mul(%c2, %c2)
  %e : Tensor = aten::add(%d, %c3, %one)
  return (%e))IR")
      .inputs({at::randn({64, 64})})
      .inputs({at::randn({32, 16})})
      .tolerance(Tolerance{0, 0, 0})
      .options(keepDropout())
      .expectKernel("aten::dropout", kOut, OutputContract::kIntoInput)
      .run();
  OpTester(R"IR(
graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::clone(%x, %none)
  %d : Tensor = aten::dropout(%a, %p, %t)
  %m : Tensor = aten::add_(%a, %one, %one)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%d, %a)
  return (%r))IR")
      .inputs({at::randn({4, 5})})
      .tolerance(Tolerance{0, 0, 0})
      .options(keepDropout())
      .expectKernel("aten::dropout", kOut, OutputContract::kIntoInput)
      .run();
}

// With remove_eval_dropout on (the default) the readers read the input itself: the
// same results, a mutation of the input showing through the dropout's result as in
// ATen, and no dropout node left.
TEST(OutShapeCopy, DropoutEvalRemovedByDefaultKeepsTheAlias) {
  OpTester(R"IR(
graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::clone(%x, %none)
  %d : Tensor = aten::dropout(%a, %p, %t)
  %m : Tensor = aten::add_(%a, %one, %one)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%d, %a)
  return (%r))IR")
      .inputs({at::randn({4, 5})})
      .inputs({at::randn({6, 4}).t()})
      .tolerance(Tolerance{0, 0, 0})
      .run();
  auto m = Module::fromIR(kDropoutIR, Options{});
  for (const Node* n : m->compiled()->graph().top()->nodes()) EXPECT_NE(n->kind(), "aten::dropout");
}

// flip: a strided copy into the retained output, bit-exact, for every element size
// (bool, int8, half, float, int64, complex double), negative and several dims,
// non-contiguous (sliced) inputs; dense permuted inputs (ATen keeps their layout), empty
// and 0-d ones take ATen's op.
std::string flipIR(const std::string& dims) {
  return "graph(%x : Tensor):\n"
         "  %d : int[] = prim::Constant[value=" + dims + "]()\n"
         "  %y : Tensor = aten::flip(%x, %d)\n"
         "  return (%y)\n";
}

TEST(OutShapeCopy, Flip) {
  for (const char* dims : {"[0]", "[-1]", "[0, 2]", "[1]", "[-3, -2, -1]"}) {
    for (auto dtype : {at::kFloat, at::kLong, at::kBool, at::kChar, at::kHalf, at::kComplexDouble}) {
      SCOPED_TRACE(std::string(dims) + " " + c10::toString(dtype));
      auto make = [dtype](std::vector<int64_t> shape) { return (at::randn(shape) * 5).to(dtype); };
      OpTester(flipIR(dims))
          .inputs({make({2, 3, 4})})
          .inputs({make({5, 1, 7})})
          .inputs({make({6, 8, 10}).slice(0, 1, 5).slice(2, 0, 10, 3)})  // non-contiguous
          .inputs({make({4, 5, 6}).transpose(0, 2)})                      // dense, permuted
          .inputs({make({0, 3, 2})})
          .tolerance(Tolerance{0, 0, 0})
          .expectKernel("aten::flip", kOut)
          .run();
    }
  }
  OpTester(flipIR("[0]")).inputs({at::randn({7})}).inputs({at::randn({1})}).tolerance(Tolerance{0, 0, 0}).run();
  Options loose;
  loose.strict_inputs = false;
  OpTester(flipIR("[-1]"))
      .inputs({at::randn({})})
      .inputs({at::randn({3})})
      .options(loose)
      .tolerance(Tolerance{0, 0, 0})
      .run();
}

TEST(OutShapeCopy, FlipBadDimsRaiseAtensError) {
  for (const char* dims : {"[3]", "[0, 0]", "[-4]"}) {
    auto m = Module::fromIR(flipIR(dims), Options{}, "flip");
    EXPECT_ANY_THROW(m->run({at::randn({2, 3, 4})})) << dims;
    EXPECT_ANY_THROW(m->run({at::randn({2, 3, 4})})) << dims << " (second run)";
  }
}

}  // namespace
}  // namespace brisk::testing
