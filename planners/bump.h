#pragma once

#include "planners/layout.h"

namespace brisk::planners {

// Naive baseline: every buffer gets its own bytes, back to back in index order; the slab
// is the sum of aligned sizes. Never reuses memory, so it is valid for any conflict
// relation and is the upper bound the other planners are compared against.
LayoutPlan bumpLayout(const PlanningProblem& problem);

}  // namespace brisk::planners
