#include "planners/layout.h"

#include <algorithm>
#include <sstream>
#include <utility>

namespace brisk::planners {

bool PlanningProblem::conflict(size_t a, size_t b) const {
  if (conflicts) return conflicts(a, b);
  const AllocationSpec& x = specs[a];
  const AllocationSpec& y = specs[b];
  return x.first <= y.last && y.first <= x.last;
}

size_t PlanningProblem::alignedSize(size_t i) const {
  return alignUp(specs[i].size, alignment);
}

size_t alignUp(size_t n, size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

size_t lowerBound(const std::vector<AllocationSpec>& specs, size_t alignment) {
  // Sweep over events: +size at `first`, -size just after `last`. 64-bit coordinates so
  // last == UINT32_MAX cannot wrap. At equal coordinates removals go first, because a
  // buffer ending at step s-1 is not live together with one starting at s.
  std::vector<std::pair<uint64_t, int64_t>> events;
  events.reserve(2 * specs.size());
  for (const AllocationSpec& s : specs) {
    if (s.size == 0) continue;
    auto bytes = static_cast<int64_t>(alignUp(s.size, alignment));
    events.emplace_back(s.first, bytes);
    events.emplace_back(uint64_t{s.last} + 1, -bytes);
  }
  std::sort(events.begin(), events.end());  // negative deltas sort first at a coordinate
  int64_t live = 0, best = 0;
  for (const auto& e : events) {
    live += e.second;
    best = std::max(best, live);
  }
  return static_cast<size_t>(best);
}

std::string validatePlan(const PlanningProblem& problem, const LayoutPlan& plan) {
  const auto& specs = problem.specs;
  const size_t align = problem.alignment;
  std::ostringstream err;
  if (plan.offsets.size() != specs.size()) {
    err << "plan has " << plan.offsets.size() << " offsets for " << specs.size()
        << " specs";
    return err.str();
  }
  if (plan.total_size % align != 0) {
    err << "total_size " << plan.total_size << " not a multiple of " << align;
    return err.str();
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const size_t off = plan.offsets[i];
    if (off % align != 0) {
      err << "buffer " << i << " offset " << off << " not a multiple of " << align;
      return err.str();
    }
    // Offsets and total are aligned, so checking raw sizes is equivalent to checking
    // the rounded ones.
    if (specs[i].size > 0 && (off > plan.total_size ||
                              specs[i].size > plan.total_size - off)) {
      err << "buffer " << i << " [" << off << ", +" << specs[i].size
          << ") exceeds total_size " << plan.total_size;
      return err.str();
    }
  }
  for (size_t a = 0; a < specs.size(); ++a) {
    if (specs[a].size == 0) continue;
    for (size_t b = a + 1; b < specs.size(); ++b) {
      if (specs[b].size == 0 || !problem.conflict(a, b)) continue;
      const size_t oa = plan.offsets[a], ob = plan.offsets[b];
      if (oa < ob + specs[b].size && ob < oa + specs[a].size) {
        err << "conflicting buffers " << a << " [" << oa << ", +" << specs[a].size
            << ") and " << b << " [" << ob << ", +" << specs[b].size << ") overlap";
        return err.str();
      }
    }
  }
  return "";
}

}  // namespace brisk::planners
