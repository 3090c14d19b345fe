// Randomized properties of every registered planner: plans are valid, never beat the
// lower bound, never lose to the naive bump layout, and are deterministic. Also prints
// (does not assert) the mean total/lowerBound per planner, to show plan quality.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <random>

#include "planners/layout.h"
#include "planners/registry.h"

namespace brisk::planners {
namespace {

constexpr int kProblems = 10000;

PlanningProblem randomIntervals(std::mt19937_64& rng, size_t alignment) {
  PlanningProblem p;
  p.alignment = alignment;
  const size_t n = std::uniform_int_distribution<size_t>(1, 60)(rng);
  const uint32_t steps = std::uniform_int_distribution<uint32_t>(1, 2 * n)(rng);
  // Mostly short lifetimes, like activations, with a few long ones (skip connections).
  const uint32_t max_len = std::uniform_int_distribution<uint32_t>(0, steps)(rng);
  std::uniform_int_distribution<size_t> size_dist(1, size_t{1} << 20);
  for (size_t i = 0; i < n; ++i) {
    const size_t size = rng() % 10 == 0 ? 0 : size_dist(rng);
    const uint32_t first = std::uniform_int_distribution<uint32_t>(0, steps - 1)(rng);
    const uint32_t len = std::uniform_int_distribution<uint32_t>(0, max_len)(rng);
    p.specs.push_back({size, first, first + len});
  }
  return p;
}

// A random symmetric relation that contains interval intersection: a parallel executor
// forbids sharing between more pairs than a serial one does, never fewer.
void addRandomConflicts(std::mt19937_64& rng, PlanningProblem& p) {
  const size_t n = p.specs.size();
  const double extra = std::uniform_real_distribution<double>(0.0, 0.4)(rng);
  std::bernoulli_distribution coin(extra);
  auto matrix = std::make_shared<std::vector<char>>(n * n, 0);
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a; b < n; ++b) {
      const bool c = p.conflict(a, b) || coin(rng);
      (*matrix)[a * n + b] = (*matrix)[b * n + a] = c;
    }
  }
  p.conflicts = [matrix, n](size_t a, size_t b) { return (*matrix)[a * n + b] != 0; };
}

TEST(Property, AllPlannersOnRandomProblems) {
  auto& reg = PlannerRegistry::global();
  const std::vector<std::string> names = reg.names();
  ASSERT_GE(names.size(), 4u);
  const LayoutAlgorithm& bump = *reg.lookup("bump");

  std::map<std::string, double> ratio_sum;
  int ratio_count = 0;
  std::mt19937_64 rng(20240611);
  for (int iter = 0; iter < kProblems; ++iter) {
    // A quarter at alignment 1 to exercise unaligned sizes; the rest at the real 64.
    const size_t alignment = iter % 4 == 3 ? 1 : kAlignment;
    PlanningProblem p = randomIntervals(rng, alignment);
    const bool parallel = iter % 2 == 1;
    if (parallel) addRandomConflicts(rng, p);

    // Holds for stricter relations too: a plan valid for them is valid for intervals.
    const size_t lb = lowerBound(p.specs, alignment);
    size_t aligned_sum = 0;
    for (size_t i = 0; i < p.specs.size(); ++i) aligned_sum += p.alignedSize(i);
    const size_t bump_total = bump(p).total_size;
    ASSERT_EQ(bump_total, aligned_sum);

    const bool measure = !parallel && alignment == kAlignment && lb > 0;
    if (measure) ++ratio_count;
    for (const std::string& name : names) {
      const LayoutAlgorithm& algo = *reg.lookup(name);
      const LayoutPlan plan = algo(p);
      ASSERT_EQ(validatePlan(p, plan), "") << name << " problem " << iter;
      ASSERT_GE(plan.total_size, lb) << name << " problem " << iter;
      // Every built-in places a buffer no higher than the bytes placed before it, so none
      // may exceed the naive layout. (Greedy by Size <= storage groups is NOT guaranteed.)
      ASSERT_LE(plan.total_size, bump_total) << name << " problem " << iter;
      ASSERT_EQ(algo(p).offsets, plan.offsets) << name << " not deterministic";
      if (measure) ratio_sum[name] += double(plan.total_size) / double(lb);
    }
  }
  std::printf("mean total/lowerBound over %d random interval problems (alignment 64):\n",
              ratio_count);
  for (const auto& [name, sum] : ratio_sum) {
    std::printf("  %-18s %.4f\n", name.c_str(), sum / ratio_count);
  }
}

}  // namespace
}  // namespace brisk::planners
