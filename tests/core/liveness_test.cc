// BlockLiveness (core/graph/liveness.h) on hand-built blocks, as its specification: one
// step per node; a step reads its inputs and everything its sub-blocks read, each value
// once; a value of the block (param or output) is released after its last reading step
// unless the plan retains it or the block returns it; an output nothing reads dies right
// after its producer; constants and outer values are not the block's.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/graph/graph.h"
#include "core/graph/liveness.h"
#include "tests/core/hand_built_ir.h"

namespace brisk {
namespace {

using Steps = std::vector<uint32_t>;
using testing::mul;
using testing::neg;
using testing::schemaOf;

std::vector<uint8_t> noneRetained(const Graph& g) { return std::vector<uint8_t>(g.numValues(), 0); }

// x -> a = neg(x) -> b = neg(a) -> c = mul(b, b) -> return c
struct Chain {
  Graph g{"chain"};
  Value* x;
  Node *a, *b, *c;
  Chain() {
    x = g.top()->addParam(c10::TensorType::get(), "x");
    a = neg(g.top(), x, "a");
    b = neg(g.top(), a->output(0), "b");
    c = mul(g.top(), b->output(0), b->output(0), "c");
    g.top()->addReturn(c->output(0));
    g.finalize();
  }
};

TEST(BlockLiveness, AChainReleasesEachValueAfterItsLastReader) {
  Chain m;
  BlockLiveness l(*m.g.top(), noneRetained(m.g));
  ASSERT_EQ(l.numSteps(), 3u);
  const uint32_t x = m.x->id(), a = m.a->output(0)->id(), b = m.b->output(0)->id();
  EXPECT_EQ(l.releasedAfter(0), Steps{x});  // the param too: the block owns it
  EXPECT_EQ(l.releasedAfter(1), Steps{a});
  EXPECT_EQ(l.releasedAfter(2), Steps{b});
  EXPECT_EQ(l.find(a)->def, 0u);
  EXPECT_EQ(l.find(a)->last_use, 1u);
  EXPECT_EQ(l.find(x)->def, ValueLiveness::kNoStep);
}

TEST(BlockLiveness, AStepReadsEachValueOnce) {
  Chain m;
  BlockLiveness l(*m.g.top(), noneRetained(m.g));
  ASSERT_EQ(l.reads(2).size(), 1u);  // mul(b, b)
  EXPECT_EQ(l.reads(2)[0], m.b->output(0));
  EXPECT_EQ(l.find(m.b->output(0)->id())->readers, Steps{2});
}

TEST(BlockLiveness, ReturnedAndRetainedValuesAreNotReleased) {
  Chain m;
  std::vector<uint8_t> retained = noneRetained(m.g);
  retained[m.a->output(0)->id()] = 1;  // an out-variant output the plan reuses next run
  BlockLiveness l(*m.g.top(), retained);
  const ValueLiveness* c = l.find(m.c->output(0)->id());
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->released);  // the block's result: read after the block ends
  EXPECT_FALSE(l.find(m.a->output(0)->id())->released);
  EXPECT_TRUE(l.releasedAfter(1).empty());
  for (size_t i = 0; i < l.numSteps(); ++i)
    for (uint32_t id : l.releasedAfter(i)) EXPECT_NE(id, m.c->output(0)->id());
}

TEST(BlockLiveness, AnUnreadOutputDiesAfterItsProducerAndAnUnreadParamIsKept) {
  Graph g("unread");
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Value* unused = g.top()->addParam(c10::TensorType::get(), "unused");
  Node* dead = neg(g.top(), x, "dead");
  Node* live = neg(g.top(), x, "live");
  g.top()->addReturn(live->output(0));
  g.finalize();
  BlockLiveness l(*g.top(), noneRetained(g));
  const ValueLiveness* d = l.find(dead->output(0)->id());
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->last_use, d->def);
  EXPECT_TRUE(d->readers.empty());
  EXPECT_EQ(l.releasedAfter(0), Steps{dead->output(0)->id()});
  EXPECT_EQ(l.releasedAfter(1), Steps{x->id()});
  // A param nothing reads has no step to be released after: the caller's tensor stays.
  EXPECT_FALSE(l.find(unused->id())->released);
}

TEST(BlockLiveness, ConstantsAreNotTheBlocksValues) {
  Graph g("constant");
  Value* x = g.top()->addParam(c10::TensorType::get(), "x");
  Value* w = g.addConstant(at::ones({2}), c10::TensorType::get());
  Node* y = mul(g.top(), x, w, "y");
  g.top()->addReturn(y->output(0));
  g.finalize();
  BlockLiveness l(*g.top(), noneRetained(g));
  EXPECT_EQ(l.find(w->id()), nullptr);
  ASSERT_EQ(l.reads(0).size(), 2u);  // the step still reads it
  EXPECT_EQ(l.releasedAfter(0), Steps{x->id()});
}

TEST(BlockLiveness, ASubBlocksReadsAreItsStepsReads) {
  // y = neg(x); out = If(c) { neg(y) } else { x }; z = neg(out): y and x are read by the
  // If's step (inside its blocks), so both live through step 1 and die after it.
  testing::IfGraph m(/*before=*/true);
  Graph& g = m.g;
  Value *c = m.c, *x = m.x, *y = m.y;
  Node* inner = m.inner;
  BlockLiveness l(*g.top(), noneRetained(g));
  ASSERT_EQ(l.numSteps(), 3u);  // the inner node is part of the If's step
  const std::vector<const Value*>& reads = l.reads(1);
  EXPECT_NE(std::find(reads.begin(), reads.end(), x), reads.end());
  EXPECT_NE(std::find(reads.begin(), reads.end(), y), reads.end());
  EXPECT_NE(std::find(reads.begin(), reads.end(), inner->output(0)), reads.end());  // a block return
  EXPECT_EQ(l.find(x->id())->readers, (Steps{0, 1}));
  EXPECT_EQ(l.find(y->id())->last_use, 1u);
  EXPECT_EQ(l.find(inner->output(0)->id()), nullptr);  // the inner block's, not this one's
  Steps after_if = {c->id(), x->id(), y->id()};  // the condition is the If's input
  std::sort(after_if.begin(), after_if.end());
  EXPECT_EQ(l.releasedAfter(1), after_if);
}

}  // namespace
}  // namespace brisk
