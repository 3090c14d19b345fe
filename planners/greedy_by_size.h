#pragma once

#include "planners/layout.h"

namespace brisk::planners {

// "Greedy by Size for offset calculation" from Pisarchyk & Lee, "Efficient Memory
// Management for Deep Neural Net Inference", arXiv:2001.03288, §5.2.
//
// Buffers are visited in decreasing size (big ones are hardest to fit, so they choose
// first). For each, the already-placed buffers it conflicts with are sorted by offset and
// the smallest gap between them that holds it is taken (best fit); if no gap fits it goes
// right after the highest of them. Buffers it does not conflict with are ignored, which
// is what lets lifetimes-disjoint buffers share bytes. Slab size = highest end. On the
// paper's example this reaches the lower bound (124 units).
LayoutPlan greedyBySizeLayout(const PlanningProblem& problem);

}  // namespace brisk::planners
