#include "planners/greedy_by_breadth.h"

#include <algorithm>
#include <numeric>

#include "planners/best_fit.h"

namespace brisk::planners {

LayoutPlan greedyByBreadthLayout(const PlanningProblem& problem) {
  const auto& specs = problem.specs;
  const size_t n = specs.size();

  // Only steps where some buffer starts need visiting: every buffer is live at its own
  // `first`, and the live set at any other step is a subset of the live set at the
  // latest start before it. This keeps the cost independent of step numbering.
  std::vector<uint32_t> steps;
  for (const AllocationSpec& s : specs) steps.push_back(s.first);
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());

  std::vector<std::vector<size_t>> live(steps.size());
  std::vector<size_t> breadth(steps.size(), 0);
  for (size_t k = 0; k < steps.size(); ++k) {
    for (size_t i = 0; i < n; ++i) {
      if (specs[i].first <= steps[k] && steps[k] <= specs[i].last) {
        live[k].push_back(i);
        breadth[k] += problem.alignedSize(i);
      }
    }
    std::stable_sort(live[k].begin(), live[k].end(), [&](size_t a, size_t b) {
      return specs[a].size > specs[b].size;
    });
  }

  std::vector<size_t> step_order(steps.size());
  std::iota(step_order.begin(), step_order.end(), 0);
  std::stable_sort(step_order.begin(), step_order.end(),
                   [&](size_t a, size_t b) { return breadth[a] > breadth[b]; });

  BestFitPlacer placer(problem);
  for (size_t k : step_order) {
    for (size_t i : live[k]) {
      if (!placer.placed(i)) placer.place(i);
    }
  }
  return std::move(placer).finish();
}

}  // namespace brisk::planners
