#include "planners/best_of_orders.h"

#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "planners/best_fit.h"
#include "planners/greedy_by_breadth.h"
#include "planners/greedy_by_size.h"

namespace brisk::planners {

LayoutPlan bestOfOrdersLayout(const PlanningProblem& problem) {
  const size_t bound = lowerBound(problem.specs, problem.alignment);
  LayoutPlan best = greedyBySizeLayout(problem);
  if (best.total_size <= bound) return best;
  LayoutPlan breadth = greedyByBreadthLayout(problem);
  if (breadth.total_size < best.total_size) best = std::move(breadth);

  const size_t n = problem.specs.size();
  if (n > kBestOfOrdersMaxBuffers) return best;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(0x62726973u);  // fixed: the same problem always gets the same plan
  for (int k = 0; k < kBestOfOrdersShuffles && best.total_size > bound; ++k) {
    // Fisher-Yates with the engine's raw output: std::shuffle's use of it is not
    // specified, and the plan must not depend on the standard library.
    for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    LayoutPlan candidate = placeBestFitInOrder(problem, order);
    if (candidate.total_size < best.total_size) best = std::move(candidate);
  }
  return best;
}

}  // namespace brisk::planners
