// Offset search shared by the greedy planners (Pisarchyk & Lee, arXiv:2001.03288, §5).
#pragma once

#include <cstddef>
#include <vector>

#include "planners/layout.h"

namespace brisk::planners {

// Tracks which buffers already have offsets, and finds a place for the next one.
class BestFitPlacer {
 public:
  explicit BestFitPlacer(const PlanningProblem& problem);

  // Places non-empty buffer `i`: among already-placed buffers that conflict with it,
  // sorted by offset, picks the smallest gap that holds its aligned size; if none fits,
  // puts it right after the highest end among them (0 when none conflict). Best fit keeps
  // big gaps for buffers that need them. Empty buffers get offset 0 and are not tracked.
  void place(size_t i);
  bool placed(size_t i) const { return placed_[i]; }

  // The finished plan: offsets of all buffers and total = highest end (aligned, as every
  // offset and aligned size is).
  LayoutPlan finish() &&;

 private:
  const PlanningProblem& problem_;
  std::vector<bool> placed_;
  std::vector<size_t> order_;  // placed non-empty buffers
  LayoutPlan plan_;
};

// Places the buffers best-fit in the given order (each index once): the layout of the
// greedy planners, which differ only in their order.
LayoutPlan placeBestFitInOrder(const PlanningProblem& problem, const std::vector<size_t>& order);

}  // namespace brisk::planners
