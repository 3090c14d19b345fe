#include "planners/storage_groups.h"

#include <algorithm>
#include <numeric>

namespace brisk::planners {

LayoutPlan storageGroupsLayout(const PlanningProblem& problem) {
  const size_t n = problem.specs.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Largest first, so each group's first member is its maximum and smaller buffers fill
  // in; ties by index keep the result deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return problem.specs[a].size > problem.specs[b].size;
  });

  std::vector<std::vector<size_t>> groups;
  std::vector<size_t> group_of(n, 0);
  for (size_t i : order) {
    if (problem.specs[i].size == 0) continue;
    size_t g = 0;
    for (; g < groups.size(); ++g) {
      const auto& members = groups[g];
      if (std::none_of(members.begin(), members.end(),
                       [&](size_t m) { return problem.conflict(i, m); })) {
        break;
      }
    }
    if (g == groups.size()) groups.emplace_back();
    groups[g].push_back(i);
    group_of[i] = g;
  }

  std::vector<size_t> group_offset(groups.size());
  LayoutPlan plan;
  for (size_t g = 0; g < groups.size(); ++g) {
    group_offset[g] = plan.total_size;
    plan.total_size += problem.alignedSize(groups[g].front());
  }
  plan.offsets.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (problem.specs[i].size != 0) plan.offsets[i] = group_offset[group_of[i]];
  }
  return plan;
}

}  // namespace brisk::planners
