#pragma once

#include "planners/layout.h"

namespace brisk::planners {

// Breadth-first variant after Pisarchyk & Lee, arXiv:2001.03288 (§5.1 style, the
// "Greedy by Breadth" ordering applied to offset calculation).
//
// The breadth of a step is the total aligned size of buffers live at it (serial
// intervals). Steps are visited in decreasing breadth, since the widest step decides the
// slab size and its buffers should be packed first; at each step its not-yet-placed
// buffers are placed largest first with the same best-fit gap search as Greedy by Size.
// Placement itself only consults the conflict relation, so the plan stays valid for
// parallel schedules; the intervals only steer the order.
LayoutPlan greedyByBreadthLayout(const PlanningProblem& problem);

}  // namespace brisk::planners
