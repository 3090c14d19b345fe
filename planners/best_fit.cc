#include "planners/best_fit.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace brisk::planners {

BestFitPlacer::BestFitPlacer(const PlanningProblem& problem)
    : problem_(problem), placed_(problem.specs.size(), false) {
  plan_.offsets.assign(problem.specs.size(), 0);
}

void BestFitPlacer::place(size_t i) {
  placed_[i] = true;
  const size_t size = problem_.alignedSize(i);
  if (size == 0) return;

  // (offset, end) of placed buffers this one may not overlap.
  std::vector<std::pair<size_t, size_t>> busy;
  for (size_t j : order_) {
    if (problem_.conflict(i, j)) {
      busy.emplace_back(plan_.offsets[j], plan_.offsets[j] + problem_.alignedSize(j));
    }
  }
  std::sort(busy.begin(), busy.end());

  size_t prev_end = 0;  // highest end among the busy ranges seen so far
  size_t best_offset = 0;
  size_t best_gap = std::numeric_limits<size_t>::max();
  for (const auto& [offset, end] : busy) {
    if (offset > prev_end) {
      const size_t gap = offset - prev_end;
      if (gap >= size && gap < best_gap) {
        best_gap = gap;
        best_offset = prev_end;
      }
    }
    prev_end = std::max(prev_end, end);
  }
  if (best_gap == std::numeric_limits<size_t>::max()) best_offset = prev_end;

  plan_.offsets[i] = best_offset;
  plan_.total_size = std::max(plan_.total_size, best_offset + size);
  order_.push_back(i);
}

LayoutPlan BestFitPlacer::finish() && { return std::move(plan_); }

LayoutPlan placeBestFitInOrder(const PlanningProblem& problem, const std::vector<size_t>& order) {
  BestFitPlacer placer(problem);
  for (size_t i : order) placer.place(i);
  return std::move(placer).finish();
}

}  // namespace brisk::planners
