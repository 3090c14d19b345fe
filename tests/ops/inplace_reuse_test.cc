// In-place reuse (core/graph/inplace_reuse.h): which nodes may write into an input, and that
// the kernels doing it match the interpreter in every case, including those where the
// result does not fit the input (broadcasting to a larger shape, dtype promotion) and
// must go to a fresh tensor.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/graph/graph.h"
#include "core/executor/module.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;
// An in-place kernel is an out-variant kernel whose output may be its input.
constexpr OutputContract kIntoInput = OutputContract::kIntoInput;

// Input sets below differ in rank or dtype on purpose.
Options loose() {
  Options o;
  o.strict_inputs = false;
  return o;
}

// node kind -> reusable input, for the nodes of the top block.
// Elementwise fusion (ops_cpu.fuse_pointwise) would replace the chains whose marks these
// tests read; they test in-place reuse on single nodes, so it is off.
Options noFusion(Options o) {
  o.disabled_passes.push_back("ops_cpu.fuse_pointwise");
  return o;
}

std::vector<std::pair<std::string, int>> marks(const std::string& ir, Options o = {}) {
  auto m = Module::fromIR(ir, noFusion(o));
  std::vector<std::pair<std::string, int>> out;
  for (const Node* n : m->compiled()->graph().top()->nodes()) out.emplace_back(n->kind(), n->reusableInput());
  return out;
}

int markOf(const std::vector<std::pair<std::string, int>>& ms, const std::string& kind) {
  for (const auto& [k, r] : ms)
    if (k == kind) return r;
  ADD_FAILURE() << "no node " << kind;
  return -2;
}

TEST(InPlaceReuse, FreshSingleUseInputIsMarked) {
  const auto ms = marks(R"IR(
graph(%a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::mul(%a, %b)
  %r : Tensor = aten::relu(%y)
  %s : Tensor = aten::sigmoid(%r)
  %t : Tensor = aten::mul(%a, %a)
  %z : Tensor = aten::add(%b, %t, %one)
  %w : Tensor = aten::add(%s, %z, %one)
  return (%w))IR");
  EXPECT_EQ(markOf(ms, "aten::relu"), 0);
  EXPECT_EQ(markOf(ms, "aten::sigmoid"), 0);  // the chain keeps reusing the mul's tensor
  // %z = add(%b, %t): %b is a graph input, %t is fresh -> input 1. %w: both fresh -> 0.
  int adds = 0;
  for (const auto& [k, r] : ms)
    if (k == "aten::add") {
      EXPECT_EQ(r, adds == 0 ? 1 : 0);
      ++adds;
    }
  EXPECT_EQ(adds, 2);
}

TEST(InPlaceReuse, InputsReadElsewhereOrNotFreshAreNotMarked) {
  // %y has two readers; relu of a graph input; relu of a view; relu of a value a
  // sub-block reads; relu of a value that is returned as well.
  const auto ms = marks(R"IR(
graph(%a : Tensor, %c : bool):
  %y : Tensor = aten::mul(%a, %a)
  %r1 : Tensor = aten::relu(%y)
  %n : Tensor = aten::neg(%y)
  %r2 : Tensor = aten::tanh(%a)
  %sh : int[] = prim::Constant[value=[-1]]()
  %v : Tensor = aten::view(%r1, %sh)
  %r3 : Tensor = aten::sigmoid(%v)
  %u : Tensor = aten::mul(%n, %n)
  %o : Tensor = prim::If(%c)
    block0():
      %i : Tensor = aten::hardswish(%u)
      -> (%i)
    block1():
      -> (%a)
  %q : Tensor = aten::mul(%r2, %r2)
  %h : Tensor = aten::silu(%q)
  return (%r3, %o, %q, %h))IR");
  EXPECT_EQ(markOf(ms, "aten::relu"), -1);     // %y is also read by neg
  EXPECT_EQ(markOf(ms, "aten::tanh"), -1);     // graph input
  EXPECT_EQ(markOf(ms, "aten::sigmoid"), -1);  // a view (view is no fresh producer)
  EXPECT_EQ(markOf(ms, "aten::silu"), -1);     // %q is returned too
}

// The core ATen IR's fresh producers (flip, _log_softmax, _softmax, clone) feed in-place
// writers like the TorchScript spellings do.
TEST(InPlaceReuse, CoreIrFreshProducersAreReused) {
  const auto ms = marks(R"IR(
graph(%x : Tensor):
  %d : int[] = prim::Constant[value=[0]]()
  %m1 : int = prim::Constant[value=-1]()
  %f : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::flip(%x, %d)
  %b : Tensor = aten::relu(%a)
  %c : Tensor = aten::_log_softmax(%b, %m1, %f)
  %e : Tensor = aten::tanh(%c)
  %g : Tensor = aten::_softmax(%e, %m1, %f)
  %h : Tensor = aten::sigmoid(%g)
  %i : Tensor = aten::clone(%h, %none)
  %j : Tensor = aten::relu(%i)
  return (%j))IR");
  EXPECT_EQ(markOf(ms, "aten::relu"), 0);
  EXPECT_EQ(markOf(ms, "aten::tanh"), 0);
  EXPECT_EQ(markOf(ms, "aten::sigmoid"), 0);
  int relus = 0;
  for (const auto& [k, r] : ms)
    if (k == "aten::relu") {
      EXPECT_EQ(r, 0);
      ++relus;
    }
  EXPECT_EQ(relus, 2);
}

// Eval-mode dropout hands on its input (ATen returns it): marked whatever reads the
// input, so its alias is planned; its result is no fresh tensor (nothing writes into it);
// train=True or a non-constant train is not marked.
TEST(InPlaceReuse, EvalDropoutIsMarkedAsAnAlias) {
  const std::string ir = R"IR(
graph(%x : Tensor, %train : bool):
  %p : float = prim::Constant[value=0.5]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = aten::dropout(%x, %p, %f)
  %r : Tensor = aten::relu(%a)
  %b : Tensor = aten::dropout(%x, %p, %t)
  %c : Tensor = aten::dropout(%x, %p, %train)
  %out : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %r, %b, %c)
  return (%out))IR";
  // The marking serves eval dropouts left in the graph: core's remove_eval_dropout
  // (on by default) takes them out before this pass runs.
  Options kept;
  kept.disabled_passes = {"remove_eval_dropout"};
  const auto ms = marks(ir, kept);
  std::vector<int> drops;
  for (const auto& [k, r] : ms)
    if (k == "aten::dropout") drops.push_back(r);
  EXPECT_EQ(drops, (std::vector<int>{0, -1, -1}));
  EXPECT_EQ(markOf(ms, "aten::relu"), -1);
  Options off = kept;
  off.inplace_reuse = false;
  for (const auto& [k, r] : marks(ir, off)) EXPECT_EQ(r, -1) << k;
}

TEST(InPlaceReuse, SubBlockValueFromOutsideIsNotMarked) {
  auto m = Module::fromIR(R"IR(
graph(%a : Tensor, %c : bool):
  %u : Tensor = aten::mul(%a, %a)
  %o : Tensor = prim::If(%c)
    block0():
      %i : Tensor = aten::hardswish(%u)
      -> (%i)
    block1():
      %j : Tensor = aten::mul(%a, %a)
      %k : Tensor = aten::relu(%j)
      -> (%k)
  return (%o))IR",
                          noFusion({}));
  int hardswish = -2, relu = -2;
  for (const Node* n : m->compiled()->graph().allNodes()) {
    if (n->kind() == "aten::hardswish") hardswish = n->reusableInput();
    if (n->kind() == "aten::relu") relu = n->reusableInput();
  }
  EXPECT_EQ(hardswish, -1);  // %u lives in the outer block: a loop would run it twice
  EXPECT_EQ(relu, 0);        // produced and consumed inside the block
}

TEST(InPlaceReuse, OptionOffMarksNothing) {
  Options o;
  o.inplace_reuse = false;
  const auto ms = marks(R"IR(
graph(%a : Tensor):
  %y : Tensor = aten::mul(%a, %a)
  %r : Tensor = aten::relu(%y)
  return (%r))IR",
                        o);
  EXPECT_EQ(markOf(ms, "aten::relu"), -1);
}

TEST(InPlaceReuse, UnaryChainsMatchTheInterpreter) {
  const std::string ir = R"IR(
graph(%a : Tensor):
  %lo : float = prim::Constant[value=-0.5]()
  %hi : float = prim::Constant[value=0.5]()
  %none : NoneType = prim::Constant()
  %approx : str = prim::Constant[value="tanh"]()
  %y : Tensor = aten::mul(%a, %a)
  %b : Tensor = aten::sub(%y, %a, %hi)
  %r : Tensor = aten::relu(%b)
  %h : Tensor = aten::hardtanh(%r, %lo, %hi)
  %s : Tensor = aten::sigmoid(%h)
  %t : Tensor = aten::tanh(%s)
  %g : Tensor = aten::gelu(%t, %approx)
  %l : Tensor = aten::silu(%g)
  %w : Tensor = aten::hardswish(%l)
  %x : Tensor = aten::hardsigmoid(%w)
  %c : Tensor = aten::clamp(%x, %lo, %none)
  %r6 : Tensor = aten::relu6(%c)
  return (%r6))IR";
  for (const char* key : {"aten::relu", "aten::hardtanh", "aten::sigmoid", "aten::tanh", "aten::gelu", "aten::silu",
                          "aten::hardswish", "aten::hardsigmoid", "aten::clamp", "aten::relu6"}) {
    SCOPED_TRACE(key);
    OpTester(ir)
        .options(loose())
        .inputs({at::randn({3, 4}) * 3})
        .inputs({at::randn({2, 8, 9, 5}) * 3})  // large enough for ATen's vectorized path
        .inputs({at::randn({2, 3, 5, 5}).contiguous(at::MemoryFormat::ChannelsLast) * 3})
        .expectKernel(key, kOut, kIntoInput)
        .run();
  }
}

TEST(InPlaceReuse, SmallAndLargeReluInPlace) {
  const std::string ir = R"IR(
graph(%a : Tensor):
  %y : Tensor = aten::neg(%a)
  %z : Tensor = aten::mul(%y, %a)
  %r : Tensor = aten::relu(%z)
  return (%r))IR";
  OpTester(ir)
      .options(loose())
      .inputs({at::randn({7})})
      .inputs({at::randn({300, 100})})  // above the small-relu loop's size
      .inputs({at::randint(-5, 5, {6}, at::kInt)})
      .expectKernel("aten::relu", kOut, kIntoInput)
      .run();
}

TEST(InPlaceReuse, BinaryOpsWriteIntoTheOperandThatFits) {
  for (const char* op : {"aten::add", "aten::sub", "aten::mul", "aten::div"}) {
    SCOPED_TRACE(op);
    const bool alpha = std::string(op) == "aten::add" || std::string(op) == "aten::sub";
    const std::string args = alpha ? ", %two)" : ")";
    const std::string ir = std::string(
                               "graph(%a : Tensor, %b : Tensor):\n"
                               "  %two : int = prim::Constant[value=2]()\n"
                               "  %x : Tensor = aten::exp(%a)\n"
                               "  %y : Tensor = aten::exp(%b)\n"
                               "  %z : Tensor = ") +
                           op + "(%x, %y" + args + "\n  return (%z)\n";
    // Same shapes; the second operand broadcasting into the first; the first
    // broadcasting into the second (the result fits only %y); neither fits (both
    // broadcast to a larger result).
    OpTester(ir)
        .options(loose())
        .inputs({at::randn({4, 5}), at::randn({4, 5})})
        .inputs({at::randn({6, 5}), at::randn({5})})
        .inputs({at::randn({1, 5}), at::randn({6, 5})})
        .inputs({at::randn({6, 1}), at::randn({1, 5})})
        .expectKernel(std::string(op) + ".Tensor", kOut, kIntoInput)
        .run();
  }
}

TEST(InPlaceReuse, PromotionGoesToAFreshTensor) {
  // %i is an integer tensor: add(%i, float) is float, so it cannot be written into %i.
  OpTester(R"IR(
graph(%a : Tensor, %f : Tensor):
  %one : int = prim::Constant[value=1]()
  %i : Tensor = aten::mul(%a, %a)
  %s : Tensor = aten::add(%i, %f, %one)
  %j : Tensor = aten::mul(%a, %a)
  %t : Tensor = aten::sigmoid(%j)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%s, %t)
  return (%r))IR")
      .options(loose())
      .inputs({at::randint(-4, 4, {3, 4}, at::kLong), at::randn({3, 4})})
      .inputs({at::randint(-4, 4, {5, 6}, at::kInt), at::randn({5, 6})})
      .expectKernel("aten::add.Tensor", kOut, kIntoInput)
      .expectKernel("aten::sigmoid", kOut, kIntoInput)
      .run();
}

TEST(InPlaceReuse, ParallelExecutorAndNoPlanning) {
  const std::string ir = R"IR(
graph(%a : Tensor):
  %one : int = prim::Constant[value=1]()
  %x : Tensor = aten::mul(%a, %a)
  %y : Tensor = aten::neg(%a)
  %rx : Tensor = aten::relu(%x)
  %ty : Tensor = aten::tanh(%y)
  %s : Tensor = aten::add(%rx, %ty, %one)
  %r : Tensor = aten::sigmoid(%s)
  return (%r))IR";
  Options par = loose();
  par.max_parallel_ops = 2;
  OpTester(ir).options(par).inputs({at::randn({64, 64})}).inputs({at::randn({80, 90})}).run();
  Options unplanned;
  unplanned.memory_planning = false;
  OpTester(ir).options(unplanned).inputs({at::randn({8})}).inputs({at::randn({30})}).run();
  Options off;
  off.inplace_reuse = false;
  OpTester(ir).options(off).inputs({at::randn({8})}).expectKernel("aten::relu", kOut, OutputContract::kReused).run();
}

}  // namespace
}  // namespace brisk::testing
