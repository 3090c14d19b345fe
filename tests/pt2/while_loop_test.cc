// torch while_loop programs (export_while_loops.py) through Module::load: brisk's
// prim::Loop against ep.module() for zero, one and many trips, a body reading outer
// values (additional_inputs) and the batch size, no additional inputs, a torch.cond or
// another while_loop inside the body, both IRs; the loop's own memory plan; the errors for damaged
// cond / body graphs.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "core/frontend/model_inputs.h"
#include "core/graph/graph.h"
#include "tests/pt2/pt2_check.h"
#include "tests/testing/model_check.h"
#include "tools/ivalue_compare.h"

namespace brisk {
namespace {

using pt2_testing::expectLoadError;
using pt2_testing::expectMatchesExport;
using pt2_testing::loadPickle;
using pt2_testing::program;

const char* const kIRs[] = {"", "_core"};
const char* const kTrips[] = {"while_trips0", "while_trips1", "while_trips9"};

TEST(WhileLoop, ZeroOneAndManyTrips) {
  for (const char* ir : kIRs)
    for (const char* trips : kTrips) expectMatchesExport(std::string("while_counter") + ir + ".pt2", trips, Options{});
}

// One module, the cases in turn: other batch sizes and trip counts on the same
// Runtime (the loop block's slab is re-planned or reused, never stale).
TEST(WhileLoop, OneModuleAcrossTripCountsAndBatches) {
  for (const char* ir : kIRs) {
    auto module = Module::load(program(std::string("while_counter") + ir + ".pt2"), Options{});
    for (const char* trips : {"while_trips9", "while_trips0", "while_trips1", "while_trips9", "while_trips1"}) {
      SCOPED_TRACE(std::string(ir) + " " + trips);
      ModelInputs in = loadInputs(program(std::string(trips) + ".inputs.pt"));
      c10::IValue expected = loadPickle(program(std::string(trips) + ".expected.pt"));
      EXPECT_EQ(compareIValues(module->run(in.args, in.kwargs), expected, Tolerance{1e-4, 1e-5, 1e-5}), "");
    }
  }
}

TEST(WhileLoop, NoAdditionalInputs) {
  for (const char* ir : kIRs)
    expectMatchesExport(std::string("while_no_additional") + ir + ".pt2", "while_no_additional", Options{});
}

TEST(WhileLoop, CondInsideTheBody) {
  for (const char* ir : kIRs)
    expectMatchesExport(std::string("while_nested_cond") + ir + ".pt2", "while_nested_cond", Options{});
}

// A while_loop in a while_loop's body, the batch dynamic: the inner body uses it as an
// int (a SymInt where mul.Tensor / div.Tensor want a tensor: their Scalar overloads)
// and in a shape (ones(B, 1)); the inner trip count is the outer counter.
TEST(WhileLoop, WhileInsideTheBodyWithShapes) {
  for (const char* ir : kIRs)
    expectMatchesExport(std::string("while_nested_while") + ir + ".pt2", "while_nested_while", Options{});
}

TEST(WhileLoop, OtherExecutorsAndKernels) {
  Options fallback;
  fallback.fallback_only = true;
  Options unplanned;
  unplanned.memory_planning = false;
  Options parallel;
  parallel.max_parallel_ops = 2;
  for (const Options& o : {fallback, unplanned, parallel}) {
    expectMatchesExport("while_counter_core.pt2", "while_trips9", o);
    expectMatchesExport("while_nested_cond.pt2", "while_nested_cond", o);
    expectMatchesExport("while_nested_while_core.pt2", "while_nested_while", o);
  }
}

// The program: the condition inlined once before the loop, and in the body after
// body_graph: (trip, i, h) -> (Bool(i' < n), i', h').
TEST(WhileLoop, BecomesOnePrimLoopWithTheConditionAtTheEndOfItsBody) {
  Options o;
  o.disabled_passes = {"ops_cpu.fuse_pointwise"};  // it would fuse i' = i + 1 with i' < n
  auto module = Module::load(program("while_counter.pt2"), o);
  const Node* loop = nullptr;
  for (const Node* n : module->compiled()->graph().allNodes())
    if (n->kind() == "prim::Loop") {
      EXPECT_EQ(loop, nullptr) << "two loops";
      loop = n;
    }
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->owningBlock(), module->compiled()->graph().top());
  EXPECT_EQ(loop->input(0)->constant().toInt(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(loop->input(1)->producer()->kind(), "aten::Bool");
  const Block& body = *loop->block(0);
  ASSERT_EQ(body.params().size(), 3u);
  ASSERT_EQ(body.returns().size(), 3u);
  ASSERT_NE(body.returns()[0]->producer(), nullptr);
  EXPECT_EQ(body.returns()[0]->producer()->kind(), "aten::Bool");
  EXPECT_EQ(body.returns()[0]->producer()->input(0)->producer()->kind(), "aten::lt");
  EXPECT_EQ(body.nodes().back(), body.returns()[0]->producer());
}

// The body block has a slab of its own: planned once, on its first trip, and reused by
// every later trip and run (no re-plan while shapes stay the same).
TEST(WhileLoop, TheBodyHasItsOwnMemoryPlan) {
  auto module = Module::load(program("while_counter_core.pt2"), Options{});
  ModelInputs in = loadInputs(program("while_trips9.inputs.pt"));
  for (int run = 0; run < 4; ++run) module->run(in.args, in.kwargs);
  const MemoryStats m = module->stats().memory;
  EXPECT_EQ(m.plans, 2u) << "the top block and the loop body";
  EXPECT_EQ(m.replans, 0u);
  EXPECT_GE(m.managed_tensors, 2u);
}

// After zero trips the loop returns its initial values; the counter's is a constant
// export folded (zeros(())), which the caller must get a copy of, not the Module's.
TEST(WhileLoop, ZeroTripsDoNotHandOutTheModulesConstant) {
  for (const char* ir : kIRs) {
    auto module = Module::load(program(std::string("while_counter") + ir + ".pt2"), Options{});
    ModelInputs in = loadInputs(program("while_trips0.inputs.pt"));
    at::Tensor i = module->run(in.args, in.kwargs).toTupleRef().elements()[1].toTensor();
    EXPECT_EQ(i.item<int64_t>(), 0);
    i.add_(5);
    EXPECT_EQ(module->run(in.args, in.kwargs).toTupleRef().elements()[1].toTensor().item<int64_t>(), 0) << ir;
  }
}

// Outputs a caller holds (the loop's results: fresh tensors, or after zero trips the
// initial values) are never written by later runs, whatever their trip counts.
TEST(WhileLoop, HeldOutputsSurviveLaterRuns) {
  auto inputs = [](const char* c) { return loadInputs(program(std::string(c) + ".inputs.pt")); };
  for (const char* ir : kIRs) {
    SCOPED_TRACE(ir);
    auto module = Module::load(program(std::string("while_counter") + ir + ".pt2"), Options{});
    auto rt = module->createRuntime();
    testing::expectHeldOutputsSurvive(*rt, inputs("while_trips0"), inputs("while_trips9"), 2, 3);
    testing::expectHeldOutputsSurvive(*rt, inputs("while_trips9"), inputs("while_trips1"), 2, 3);
  }
}

TEST(WhileLoopErrors, CondGraphMustReturnABoolTensor) {
  expectLoadError("while_bad_cond.pt2", Options{},
                  {"while_bad_cond.pt2", "%while_loop", "torch.ops.higher_order.while_loop",
                   "while_loop's cond_graph must return one one-element bool tensor; "
                   "it returns 'arg0_1', Float[2, 2]"});
}

TEST(WhileLoopErrors, BodyGraphMustReturnEveryCarriedValue) {
  expectLoadError("while_bad_body.pt2", Options{},
                  {"while_bad_body.pt2", "%while_loop", "body_graph returns 1 values for 2 carried inputs"});
}

}  // namespace
}  // namespace brisk
