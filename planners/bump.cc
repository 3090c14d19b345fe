#include "planners/bump.h"

namespace brisk::planners {

LayoutPlan bumpLayout(const PlanningProblem& problem) {
  LayoutPlan plan;
  plan.offsets.assign(problem.specs.size(), 0);
  for (size_t i = 0; i < problem.specs.size(); ++i) {
    const size_t size = problem.alignedSize(i);
    if (size == 0) continue;  // occupies nothing: keep offset 0
    plan.offsets[i] = plan.total_size;
    plan.total_size += size;
  }
  return plan;
}

}  // namespace brisk::planners
