#pragma once
// Memory planning: every managed tensor of a block lives in one slab (issue "Memory
// planning"; the scheme of Static Runtime's MemoryPlanner).
//
// Load time (planManagedValues): the managed tensors of an ExecBlock are its retained
// out-variant outputs (they never escape a run); each gets the range of the block's
// steps during which it, or any value that may alias it (views, containers: the edges
// of escape analysis), is read. Uses inside nested blocks count at the enclosing step.
//
// Run time (BlockMemory, one per Runtime and block with managed tensors): the block's
// first run is the profile run (kernels allocate as usual). At its end each managed
// tensor's storage size is recorded (tensors sharing a storage are planned once, with
// the union of their ranges), the layout algorithm places them, and one slab is
// allocated. Before every later run of the block each managed storage is pointed into
// the slab at its offset; after the block it is detached again (null data, 0 bytes),
// so between runs no managed tensor holds memory outside the slab. A tensor that grew
// past its planned size during a run (the kernel reallocated it) triggers a re-plan
// with the largest sizes seen. Loop bodies do this per iteration: both passes are flat
// loops over the block's managed slots.
//
// Safety net: a managed storage found referenced from outside the managed slots after
// the block (escape analysis was wrong, or an unusual kernel) is copied out of the slab
// and that value is no longer managed (it is then allocated fresh every run).
#include <ATen/core/ivalue.h>
#include <c10/core/Allocator.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "planners/layout.h"

namespace brisk {

class Graph;
struct ExecBlock;

struct MemoryStats {
  size_t slab_bytes = 0;       // sum of the blocks' slabs
  size_t lower_bound = 0;      // sum of planners::lowerBound over the same specs
  size_t managed_tensors = 0;  // tensors placed in a slab
  uint64_t plans = 0;          // layouts computed (profile runs + re-plans)
  uint64_t replans = 0;        // layouts recomputed because a tensor outgrew its plan
  uint64_t evictions = 0;      // managed tensors found shared after a run (safety net)
};

// Load time: fills `block.managed` from the plan's retained values (per slot).
void planManagedValues(const Graph& graph, const std::vector<uint8_t>& retained, ExecBlock& block);

// Run time: one block's slab and managed tensors in one Runtime. Not thread-safe (a
// Runtime runs on one thread at a time).
class BlockMemory {
 public:
  BlockMemory(const ExecBlock& block, const planners::LayoutAlgorithm& layout);
  ~BlockMemory();
  BlockMemory(const BlockMemory&) = delete;
  BlockMemory& operator=(const BlockMemory&) = delete;

  // Before the block's first step: points managed storages into the slab.
  void prepare(c10::IValue* slots);
  // After its last step: records sizes, detaches storages, (re)plans when needed.
  // Returns true when the layout changed.
  bool finish(c10::IValue* slots);
  // After a failed run: detaches (or copies out, if shared) and clears managed slots.
  void abort(c10::IValue* slots) noexcept;

  void addStats(MemoryStats& s) const;

 private:
  bool slowFinish(c10::IValue* slots);
  void replan();
  bool inSlab(const void* p) const {
    auto* b = static_cast<const char*>(slab_.get());
    auto* c = static_cast<const char*>(p);
    return b && c >= b && c < b + slab_bytes_;
  }

  // Per managed value (active ones: evicted values are moved to evicted_slots_).
  std::vector<uint32_t> orig_;  // index into ExecBlock::managed (for conflicts_)
  std::vector<uint32_t> slot_;
  std::vector<uint32_t> first_, last_;
  std::vector<int32_t> group_;     // index into the plan's groups, -1 = not placed
  std::vector<size_t> max_bytes_;  // largest storage size seen
  std::vector<c10::StorageImpl*> cur_;  // scratch for finish()
  // Per group (one storage): offset in the slab and planned bytes.
  std::vector<size_t> offset_, bytes_;
  bool singletons_ = true;  // every group has one managed value
  std::vector<uint32_t> evicted_slots_;  // cleared after every run, never placed

  c10::DataPtr slab_;
  size_t slab_bytes_ = 0;
  size_t lower_bound_ = 0;
  size_t placed_ = 0;
  bool planned_ = false;
  uint64_t plans_ = 0, replans_ = 0, evictions_ = 0;
  // ExecBlock::managed_conflicts (parallel blocks), over ExecBlock::managed indices.
  planners::ConflictFn conflicts_;
  const planners::LayoutAlgorithm* layout_;
};

}  // namespace brisk
