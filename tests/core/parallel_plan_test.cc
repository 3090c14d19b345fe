// planParallelBlock (core/plan/parallel_plan.h) on hand-built blocks, as its
// specification: step j depends on the producers of what it reads; a node with effects is
// a barrier, after every earlier step and before every later one; a chain gets no
// schedule at all; a value dies when the last of its readers finishes, whichever order
// they ran in; two managed tensors may share slab bytes only when every use of one
// precedes the other's producer in the DAG.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <vector>

#include "core/graph/graph.h"
#include "core/graph/liveness.h"
#include "core/plan/execution_plan.h"
#include "core/plan/parallel_plan.h"
#include "tests/core/hand_built_ir.h"

namespace brisk {
namespace {

using Steps = std::vector<uint32_t>;
using testing::mul;
using testing::neg;
using testing::schemaOf;

// relu_ writes its argument: an effect the interpreter orders.
Node* reluInPlace(Block* b, Value* x, const char* name) {
  return b->appendNode({"aten::relu_", "", schemaOf("aten::relu_(Tensor(a!) self) -> Tensor(a!)"), {x},
                        {{c10::TensorType::get(), name}}});
}

// The plan of `g`'s top block, as the plan builder hands it to planParallelBlock.
struct Planned {
  ExecBlock block;
  explicit Planned(const Graph& g, std::vector<ManagedValue> managed = {}) {
    block.source = g.top();
    block.managed = std::move(managed);
    planParallelBlock(BlockLiveness(*g.top(), std::vector<uint8_t>(g.numValues(), 0)), block);
  }
  const ParallelSchedule& s() const { return *block.parallel; }
  Steps succ(uint32_t i) const {
    return Steps(s().succ.begin() + s().succ_begin[i], s().succ.begin() + s().succ_begin[i + 1]);
  }
  Steps released(uint32_t i) const {
    return Steps(s().rel.begin() + s().rel_begin[i], s().rel.begin() + s().rel_begin[i + 1]);
  }
};

// x -> a = neg(x), b = neg(x) -> c = mul(a, b) -> return c
struct Diamond {
  Graph g{"diamond"};
  Value* x;
  Node *a, *b, *c;
  Diamond() {
    x = g.top()->addParam(c10::TensorType::get(), "x");
    a = neg(g.top(), x, "a");
    b = neg(g.top(), x, "b");
    c = mul(g.top(), a->output(0), b->output(0), "c");
    g.top()->addReturn(c->output(0));
    g.finalize();
  }
};

TEST(ParallelPlan, AChainGetsNoSchedule) {
  Graph g{"chain"};
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Node* a = neg(g.top(), x, "a");
  Node* b = neg(g.top(), a->output(0), "b");
  g.top()->addReturn(neg(g.top(), b->output(0), "c")->output(0));
  g.finalize();
  Planned p(g, {ManagedValue{a->output(0)->id(), 0, 1, {1}}});
  EXPECT_EQ(p.block.parallel, nullptr);  // the serial executor is strictly better
  EXPECT_FALSE(p.block.managed_conflicts);
}

TEST(ParallelPlan, EdgesGoFromProducerToReader) {
  Diamond d;
  Planned p(d.g);
  ASSERT_NE(p.block.parallel, nullptr);
  EXPECT_EQ(p.s().roots, (Steps{0, 1}));
  EXPECT_EQ(p.s().num_preds, (Steps{0, 0, 2}));
  EXPECT_EQ(p.succ(0), Steps{2});
  EXPECT_EQ(p.succ(1), Steps{2});
  EXPECT_EQ(p.succ(2), Steps{});
  EXPECT_EQ(p.s().barriers, 0u);
}

TEST(ParallelPlan, AValueDiesWhenItsLastReaderFinishes) {
  Diamond d;
  Planned p(d.g);
  // One counter per released value, started at its number of reading steps; x is read
  // by steps 0 and 1 in either order, a and b by step 2; c is returned, so it lives on.
  EXPECT_EQ(p.s().counter_slot, (Steps{d.x->id(), d.a->output(0)->id(), d.b->output(0)->id()}));
  EXPECT_EQ(p.s().counter_init, (Steps{2, 1, 1}));
  EXPECT_EQ(p.released(0), Steps{0});
  EXPECT_EQ(p.released(1), Steps{0});
  EXPECT_EQ(p.released(2), (Steps{1, 2}));
}

TEST(ParallelPlan, AnOutputNobodyReadsDiesAfterItsProducer) {
  Graph g{"unread"};
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Node* dead = neg(g.top(), x, "dead");
  g.top()->addReturn(neg(g.top(), x, "y")->output(0));
  g.finalize();
  Planned p(g);
  ASSERT_NE(p.block.parallel, nullptr);
  EXPECT_EQ(p.s().counter_slot, (Steps{x->id(), dead->output(0)->id()}));
  EXPECT_EQ(p.s().counter_init, (Steps{2, 1}));
  EXPECT_EQ(p.released(0), (Steps{0, 1}));
}

TEST(ParallelPlan, ANodeWithEffectsIsABarrier) {
  // 0: a = neg(x), 1: b = neg(x), 2: relu_(a), 3: c = neg(x) -> return (b, c)
  Graph g{"barrier"};
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Node* a = neg(g.top(), x, "a");
  Node* b = neg(g.top(), x, "b");
  reluInPlace(g.top(), a->output(0), "r");
  Node* c = neg(g.top(), x, "c");
  g.top()->addReturn(b->output(0));
  g.top()->addReturn(c->output(0));
  g.finalize();
  Planned p(g);
  ASSERT_NE(p.block.parallel, nullptr);  // steps 0 and 1 stay independent
  EXPECT_EQ(p.s().barriers, 1u);
  EXPECT_EQ(p.s().num_preds, (Steps{0, 0, 2, 1}));  // after every earlier step; the later one after it
  EXPECT_EQ(p.succ(0), Steps{2});
  EXPECT_EQ(p.succ(1), Steps{2});
  EXPECT_EQ(p.succ(2), Steps{3});
  EXPECT_EQ(p.s().roots, (Steps{0, 1}));
}

TEST(ParallelPlan, ManagedTensorsShareBytesOnlyWhenOrderedInEverySchedule) {
  // 0: a = neg(x), 1: e = neg(a), 2: b = neg(e), 3: d = neg(x) -> return (b, d)
  Graph g{"managed"};
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Node* a = neg(g.top(), x, "a");
  Node* e = neg(g.top(), a->output(0), "e");
  Node* b = neg(g.top(), e->output(0), "b");
  Node* d = neg(g.top(), x, "d");
  g.top()->addReturn(b->output(0));
  g.top()->addReturn(d->output(0));
  g.finalize();
  Planned p(g, {ManagedValue{a->output(0)->id(), 0, 1, {1}}, ManagedValue{b->output(0)->id(), 2, 2, {}},
                ManagedValue{d->output(0)->id(), 3, 3, {}}});
  ASSERT_TRUE(p.block.managed_conflicts);
  const planners::ConflictFn& conflict = p.block.managed_conflicts;
  EXPECT_FALSE(conflict(0, 1));  // a's last reader (1) precedes b's producer (2)
  EXPECT_FALSE(conflict(1, 0));  // the relation is symmetric
  EXPECT_TRUE(conflict(0, 2));   // d's producer is independent of a's uses
  EXPECT_TRUE(conflict(1, 2));
}

TEST(ParallelPlan, AReaderThatProducesTheOtherKeepsThemApart) {
  Diamond d;
  // a and b are both read by c's step: live together whatever the order of 0 and 1.
  Planned p(d.g, {ManagedValue{d.a->output(0)->id(), 0, 2, {2}}, ManagedValue{d.b->output(0)->id(), 1, 2, {2}}});
  ASSERT_TRUE(p.block.managed_conflicts);
  EXPECT_TRUE(p.block.managed_conflicts(0, 1));
}

}  // namespace
}  // namespace brisk
