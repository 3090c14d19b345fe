#include "core/memory/slab_plan.h"

#include <glog/logging.h>
#include <malloc.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "core/memory/capture_allocator.h"
#include "planners/bump.h"

namespace brisk {
namespace {

// Slabs a kernel may still reference after they were abandoned: never freed, but kept
// reachable here rather than released, so the leak is deliberate and bounded (one slab
// per block, then capture stops) instead of invisible, and leak checkers see live
// memory.
void keepAbandoned(c10::DataPtr slab) {
  static std::mutex mu;
  static auto* abandoned = new std::vector<c10::DataPtr>();
  std::lock_guard<std::mutex> lock(mu);
  abandoned->push_back(std::move(slab));
}

}  // namespace

void SlabPlan::release() {
  unregisterSlab(slab_.get());
  slab_ = c10::DataPtr();
}

void SlabPlan::abandon() {
  keepAbandoned(std::move(slab_));
  slab_ = c10::DataPtr();
}

// Groups in step order (ties: producer order), so layouts that break ties by index see
// the buffers in program order rather than in storage-address order. rank[g]: g's
// position in the problem.
planners::PlanningProblem SlabPlan::problemInStepOrder(const std::vector<planners::AllocationSpec>& specs,
                                                       std::vector<int32_t>& rank) const {
  std::vector<uint32_t> order(specs.size());
  for (uint32_t g = 0; g < order.size(); ++g) order[g] = g;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return specs[a].first != specs[b].first ? specs[a].first < specs[b].first : specs[a].last < specs[b].last;
  });
  rank.assign(specs.size(), 0);
  planners::PlanningProblem problem;
  for (uint32_t k = 0; k < order.size(); ++k) {
    rank[order[k]] = static_cast<int32_t>(k);
    problem.specs.push_back(specs[order[k]]);
  }
  return problem;
}

void SlabPlan::layOut(std::vector<planners::AllocationSpec> specs, const std::vector<int32_t>& new_group,
                      const std::vector<int32_t>& new_scratch, std::vector<ManagedRecord>& values, bool replan) {
  std::vector<int32_t> rank;
  planners::PlanningProblem problem = problemInStepOrder(specs, rank);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i].group = new_group[i] >= 0 ? rank[new_group[i]] : -1;
    values[i].capture.scratch_group = new_scratch[i] >= 0 ? rank[new_scratch[i]] : -1;
  }
  if (conflicts_) {
    // Parallel block: groups conflict when any of their values may be live together in
    // some schedule of the DAG (the serial intervals are not enough).
    auto members = std::make_shared<std::vector<std::vector<uint32_t>>>(problem.specs.size());
    for (const ManagedRecord& v : values)
      if (v.group >= 0) (*members)[v.group].push_back(v.orig);
    problem.conflicts = [members, fn = conflicts_](size_t a, size_t b) {
      for (uint32_t x : (*members)[a])
        for (uint32_t y : (*members)[b])
          if (fn(x, y)) return true;
      return false;
    };
  }
  planners::LayoutPlan plan = (*layout_)(problem);
  std::string bad = planners::validatePlan(problem, plan);
  if (!bad.empty()) {
    LOG_FIRST_N(WARNING, 1) << "brisk: memory layout invalid (" << bad << "); using the bump layout";
    plan = planners::bumpLayout(problem);
  }
  allocate(problem, std::move(plan));
  std::vector<uint32_t> members(problem.specs.size(), 0);
  placed_ = 0;
  for (const ManagedRecord& v : values)
    if (v.group >= 0) {
      ++members[v.group];
      ++placed_;
    }
  singletons_ = std::all_of(members.begin(), members.end(), [](uint32_t m) { return m <= 1; });
  if (replan) ++replans_;
  ++plans_;
}

void SlabPlan::allocate(const planners::PlanningProblem& problem, planners::LayoutPlan plan) {
  release();
  slab_ = allocateSlabMemory(plan.total_size);
  // The profile run (or the run that outgrew the plan) allocated the managed tensors one
  // by one from malloc and has just freed them; glibc keeps such freed blocks mapped
  // (below its trim threshold, or as holes), so without this the process would carry the
  // profile run's footprint next to the slab for good. Once per layout, never per run.
  ::malloc_trim(0);
  registerSlab(slab_.get(), plan.total_size);
  slab_bytes_ = plan.total_size;
  lower_bound_ = planners::lowerBound(problem.specs, problem.alignment);
  offset_ = std::move(plan.offsets);
  bytes_.resize(problem.specs.size());
  for (size_t g = 0; g < problem.specs.size(); ++g) bytes_[g] = problem.specs[g].size;
}

void SlabPlan::addStats(MemoryStats& s) const {
  s.slab_bytes += slab_bytes_;
  s.lower_bound += lower_bound_;
  s.managed_tensors += placed_;
  s.plans += plans_;
  s.replans += replans_;
}

}  // namespace brisk
