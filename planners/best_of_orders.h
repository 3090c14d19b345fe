#pragma once

#include "planners/layout.h"

namespace brisk::planners {

// The smallest of several best-fit layouts (best_fit.h) that differ only in the order
// the buffers are placed: decreasing size (greedy_by_size), greedy_by_breadth's order,
// then up to kBestOfOrdersShuffles seeded shuffles, stopping as soon as a layout reaches
// the lower bound. Deterministic: the shuffles use a fixed seed.
//
// Why: a single greedy order can paint itself into a corner. In ResNet-18 at batch 8 the
// stem conv's 25.7 MB output goes first at offset 0, the max-pool's output right above
// it, and three 6-13 MB buffers of layer 1 then miss the gap below by 0.1 MB: 38.5 MB,
// where 32.3 MB (the lower bound) is possible and shuffled orders find it.
//
// Cost: one best-fit pass is O(n^2 log n) for n buffers; above kBestOfOrdersMaxBuffers
// buffers only the two fixed orders run, so a plan stays within milliseconds.
constexpr int kBestOfOrdersShuffles = 32;
constexpr size_t kBestOfOrdersMaxBuffers = 1000;

LayoutPlan bestOfOrdersLayout(const PlanningProblem& problem);

}  // namespace brisk::planners
