#pragma once
// One block's slab and where its groups live in it. A group is one managed storage
// (every value sharing it) or one capturing kernel's scratch; the layout algorithm
// places the groups by their step ranges, or by the parallel conflict relation.
#include <c10/core/Allocator.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/memory/managed_record.h"
#include "core/memory/memory_plan.h"
#include "planners/layout.h"

namespace brisk {

class SlabPlan {
 public:
  // conflicts: ExecBlock::managed_conflicts (parallel blocks; empty for serial ones).
  SlabPlan(const planners::LayoutAlgorithm& layout, planners::ConflictFn conflicts)
      : conflicts_(std::move(conflicts)), layout_(&layout) {}
  ~SlabPlan() { release(); }
  SlabPlan(const SlabPlan&) = delete;
  SlabPlan& operator=(const SlabPlan&) = delete;

  // Lays out a new slab for `specs`: group g of the regrouped storages is
  // values[i].group = new_group[i], scratch groups are values[i].capture.scratch_group =
  // new_scratch[i] (both indices into specs, renumbered here into step order). Every
  // managed storage must be detached already: the old slab is freed.
  void layOut(std::vector<planners::AllocationSpec> specs, const std::vector<int32_t>& new_group,
              const std::vector<int32_t>& new_scratch, std::vector<ManagedRecord>& values, bool replan);
  // A kernel may still reference the slab: keep its memory forever and have none.
  void abandon();

  bool serial() const { return !conflicts_; }
  char* base() const { return static_cast<char*>(slab_.get()); }
  size_t offset(int32_t g) const { return offset_[g]; }
  size_t bytes(int32_t g) const { return bytes_[g]; }
  size_t numGroups() const { return offset_.size(); }
  // Every group holds one managed value (finish's fast path needs nothing else).
  bool singletons() const { return singletons_; }
  bool inSlab(const void* p) const {
    auto* b = static_cast<const char*>(slab_.get());
    auto* c = static_cast<const char*>(p);
    return b && c >= b && c < b + slab_bytes_;
  }
  void addStats(MemoryStats& s) const;

 private:
  void release();
  planners::PlanningProblem problemInStepOrder(const std::vector<planners::AllocationSpec>& specs,
                                               std::vector<int32_t>& rank) const;
  void allocate(const planners::PlanningProblem& problem, planners::LayoutPlan plan);

  c10::DataPtr slab_;
  size_t slab_bytes_ = 0;
  size_t lower_bound_ = 0;
  size_t placed_ = 0;
  uint64_t plans_ = 0, replans_ = 0;
  // Per group: offset in the slab and planned bytes.
  std::vector<size_t> offset_, bytes_;
  bool singletons_ = true;
  // Over ExecBlock::managed indices (ManagedRecord::orig).
  planners::ConflictFn conflicts_;
  const planners::LayoutAlgorithm* layout_;
};

}  // namespace brisk
