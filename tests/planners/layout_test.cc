// Deterministic tests: the paper's worked example, lowerBound/validatePlan themselves, and
// edge cases for every registered planner.
#include <gtest/gtest.h>

#include <numeric>

#include "planners/best_of_orders.h"
#include "planners/greedy_by_size.h"
#include "planners/layout.h"
#include "planners/registry.h"

namespace brisk::planners {
namespace {

// Pisarchyk & Lee, arXiv:2001.03288, Fig. 2 example: (first op, last op, size in units).
PlanningProblem paperExample() {
  PlanningProblem p;
  p.specs = {{32, 0, 1}, {28, 1, 4}, {36, 2, 5}, {16, 3, 5},
             {8, 4, 5},  {64, 5, 7}, {10, 6, 8}, {40, 7, 8}};
  p.alignment = 1;  // the paper counts units, not 64-byte lines
  return p;
}

TEST(PaperExample, GreedyBySizeReachesLowerBound) {
  PlanningProblem p = paperExample();
  EXPECT_EQ(lowerBound(p.specs, 1), 124u);
  LayoutPlan plan = greedyBySizeLayout(p);
  EXPECT_EQ(validatePlan(p, plan), "");
  EXPECT_EQ(plan.total_size, 124u);
}

// The managed tensors of the zoo's ResNet-18 at batch 8 (sizes in bytes, first and last
// step; the 12-13 MB single-step buffers are oneDNN's temporaries). Decreasing-size order
// puts the stem's 25.7 MB output at 0 and the max-pool's output right above it, after
// which layer 1's buffers miss the gap below by 0.1 MB: 38.5 MB. Other orders reach the
// lower bound, and best_of_orders finds one.
PlanningProblem resnet18Batch8() {
  PlanningProblem p;
  p.specs = {
      {25690112, 0, 2}, {6422528, 2, 6}, {12992512, 3, 3}, {6422528, 3, 5}, {12992512, 5, 5},
      {6422528, 5, 11}, {12992512, 8, 8}, {6422528, 8, 10}, {12992512, 10, 10}, {6422528, 10, 15},
      {9928704, 13, 13}, {3211264, 13, 16}, {10068096, 15, 15}, {3211264, 15, 17}, {7012352, 16, 16},
      {3211264, 16, 22}, {7012352, 19, 19}, {3211264, 19, 21}, {7012352, 21, 21}, {3211264, 21, 26},
      {5996544, 24, 24}, {1605632, 24, 27}, {5148800, 26, 26}, {1605632, 26, 28}, {5570560, 27, 27},
      {1605632, 27, 33}, {5570560, 30, 30}, {1605632, 30, 32}, {5570560, 32, 32}, {1605632, 32, 37},
      {7127040, 35, 35}, {802816, 35, 38}, {3033216, 37, 37}, {802816, 37, 39}, {11042816, 38, 38},
      {802816, 38, 44}, {11042816, 41, 41}, {802816, 41, 43}, {11042816, 43, 43}, {802816, 43, 50},
      {16384, 50, 52}};
  return p;
}

TEST(ResNet18Batch8, BestOfOrdersReachesLowerBoundWhereGreedyBySizeDoesNot) {
  PlanningProblem p = resnet18Batch8();
  const size_t bound = lowerBound(p.specs);
  EXPECT_EQ(bound, 32260096u);
  LayoutPlan greedy = greedyBySizeLayout(p);
  EXPECT_EQ(validatePlan(p, greedy), "");
  EXPECT_EQ(greedy.total_size, 38535168u);
  LayoutPlan best = bestOfOrdersLayout(p);
  EXPECT_EQ(validatePlan(p, best), "");
  EXPECT_EQ(best.total_size, bound);
}

TEST(PaperExample, AllPlannersValid) {
  PlanningProblem p = paperExample();
  auto& reg = PlannerRegistry::global();
  for (const std::string& name : reg.names()) {
    LayoutPlan plan = (*reg.lookup(name))(p);
    EXPECT_EQ(validatePlan(p, plan), "") << name;
    EXPECT_GE(plan.total_size, 124u) << name;
    std::printf("paper example: %-18s total %zu (lower bound 124)\n", name.c_str(),
                plan.total_size);
  }
}

TEST(Layout, AlignUp) {
  EXPECT_EQ(alignUp(0), 0u);
  EXPECT_EQ(alignUp(1), 64u);
  EXPECT_EQ(alignUp(64), 64u);
  EXPECT_EQ(alignUp(65), 128u);
  EXPECT_EQ(alignUp(7, 1), 7u);
}

TEST(Layout, DefaultConflictIsIntervalIntersection) {
  PlanningProblem p;
  p.specs = {{1, 0, 1}, {1, 1, 2}, {1, 3, 3}};
  EXPECT_TRUE(p.conflict(0, 1));   // share step 1 (last is inclusive)
  EXPECT_FALSE(p.conflict(0, 2));
  EXPECT_FALSE(p.conflict(1, 2));  // adjacent steps do not overlap
  p.conflicts = [](size_t, size_t) { return true; };
  EXPECT_TRUE(p.conflict(0, 2));
}

TEST(Layout, LowerBound) {
  EXPECT_EQ(lowerBound({}), 0u);
  EXPECT_EQ(lowerBound({{0, 0, 5}}), 0u);
  EXPECT_EQ(lowerBound({{1, 0, 0}}), 64u);
  // Adjacent intervals never live together; touching ones do.
  EXPECT_EQ(lowerBound({{100, 0, 1}, {100, 2, 3}}), 128u);
  EXPECT_EQ(lowerBound({{100, 0, 2}, {100, 2, 3}}), 256u);
  // last == UINT32_MAX must not wrap.
  EXPECT_EQ(lowerBound({{64, 0, UINT32_MAX}, {64, UINT32_MAX, UINT32_MAX}}), 128u);
}

TEST(Layout, ValidatePlanCatchesErrors) {
  PlanningProblem p;
  p.specs = {{64, 0, 1}, {64, 1, 2}, {64, 3, 4}};
  EXPECT_EQ(validatePlan(p, {{0, 64, 0}, 128}), "");
  EXPECT_NE(validatePlan(p, {{0, 64}, 128}), "");          // wrong count
  EXPECT_NE(validatePlan(p, {{0, 64, 0}, 130}), "");       // total misaligned
  EXPECT_NE(validatePlan(p, {{0, 32, 0}, 128}), "");       // offset misaligned
  EXPECT_NE(validatePlan(p, {{0, 64, 128}, 128}), "");     // beyond total
  EXPECT_NE(validatePlan(p, {{0, 0, 64}, 128}), "");       // 0 and 1 overlap
  p.conflicts = [](size_t, size_t) { return true; };       // stricter relation
  EXPECT_NE(validatePlan(p, {{0, 64, 0}, 128}), "");       // now 0 and 2 clash
}

// Every registered planner on the edge cases.
class EdgeCases : public ::testing::TestWithParam<std::string> {
 protected:
  LayoutPlan run(const PlanningProblem& p) {
    const LayoutAlgorithm* algo = PlannerRegistry::global().lookup(GetParam());
    EXPECT_NE(algo, nullptr);
    LayoutPlan plan = (*algo)(p);
    EXPECT_EQ(validatePlan(p, plan), "");
    return plan;
  }
};

TEST_P(EdgeCases, Empty) {
  LayoutPlan plan = run(PlanningProblem{});
  EXPECT_TRUE(plan.offsets.empty());
  EXPECT_EQ(plan.total_size, 0u);
}

TEST_P(EdgeCases, AllZeroSizes) {
  PlanningProblem p;
  p.specs = {{0, 0, 3}, {0, 1, 2}, {0, 2, 2}};
  LayoutPlan plan = run(p);
  EXPECT_EQ(plan.total_size, 0u);
  EXPECT_EQ(plan.offsets, (std::vector<size_t>{0, 0, 0}));
}

TEST_P(EdgeCases, OneBuffer) {
  PlanningProblem p;
  p.specs = {{100, 4, 9}};
  LayoutPlan plan = run(p);
  EXPECT_EQ(plan.offsets, (std::vector<size_t>{0}));
  EXPECT_EQ(plan.total_size, 128u);
}

TEST_P(EdgeCases, ZeroSizedAmongOthers) {
  PlanningProblem p;
  p.specs = {{64, 0, 5}, {0, 0, 5}, {64, 0, 5}};
  LayoutPlan plan = run(p);
  EXPECT_EQ(plan.offsets[1], 0u);
  EXPECT_EQ(plan.total_size, 128u);
}

TEST_P(EdgeCases, NothingConflictsSharesEverything) {
  PlanningProblem p;
  p.specs = {{64, 0, 5}, {200, 0, 5}, {128, 0, 5}};
  p.conflicts = [](size_t, size_t) { return false; };
  LayoutPlan plan = run(p);
  if (GetParam() != "bump") {
    EXPECT_EQ(plan.total_size, 256u);
  }
}

TEST_P(EdgeCases, EverythingConflictsNeedsTheSum) {
  PlanningProblem p;
  p.specs = {{64, 0, 0}, {200, 1, 1}, {128, 2, 2}};  // disjoint intervals, but...
  p.conflicts = [](size_t, size_t) { return true; };  // ...a parallel schedule
  EXPECT_EQ(run(p).total_size, 448u);
}

INSTANTIATE_TEST_SUITE_P(AllPlanners, EdgeCases,
                         ::testing::ValuesIn(PlannerRegistry::global().names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace brisk::planners
