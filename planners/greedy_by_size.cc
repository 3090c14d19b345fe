#include "planners/greedy_by_size.h"

#include <algorithm>
#include <numeric>

#include "planners/best_fit.h"

namespace brisk::planners {

LayoutPlan greedyBySizeLayout(const PlanningProblem& problem) {
  std::vector<size_t> order(problem.specs.size());
  std::iota(order.begin(), order.end(), 0);
  // Ties by index keep the plan deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return problem.specs[a].size > problem.specs[b].size;
  });
  return placeBestFitInOrder(problem, order);
}

}  // namespace brisk::planners
