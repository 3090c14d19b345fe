#include "core/memory/block_memory.h"

#include <glog/logging.h>

#include <algorithm>

#include "core/plan/execution_plan.h"
#include "core/kernels/output_capture.h"
#include "core/memory/regroup.h"
#include "core/memory/storage_ops.h"

namespace brisk {
namespace {
using storage_ops::useCount;

// Profile-run allocations at least this large get their own mapping.
constexpr size_t kMapLargeBytes = 1 << 20;
}  // namespace

BlockMemory::BlockMemory(const ExecBlock& block, const planners::LayoutAlgorithm& layout, bool plan_scratch)
    : slab_(layout, block.managed_conflicts),
      profile_(/*lean=*/!block.managed_conflicts),
      plan_scratch_(plan_scratch && !block.managed_conflicts) {
  for (const ManagedValue& m : block.managed)
    values_.push_back(ManagedRecord{static_cast<uint32_t>(values_.size()), m.slot, m.first, m.last});
  rebuildSlotIndex();
  // Capturing allocating kernels' outputs needs brisk's allocator in front of the
  // default one (once per process); without it those outputs are simply not captured.
  installCaptureAllocator();
}

BlockMemory::~BlockMemory() { unhook(); }

void BlockMemory::unhook() {
  if (!hooked_) return;
  setAllocationHook(prev_hook_);
  hooked_ = false;
}

void BlockMemory::rebuildSlotIndex() {
  uint32_t max_slot = 0;
  for (const ManagedRecord& v : values_) max_slot = std::max(max_slot, v.slot);
  index_of_slot_.assign(values_.empty() ? 0 : max_slot + 1, -1);
  for (size_t i = 0; i < values_.size(); ++i) index_of_slot_[values_[i].slot] = static_cast<int32_t>(i);
}

void BlockMemory::prepare(c10::IValue* slots) {
  // This block's kernels allocate on this thread until finish()/abort(): see serve().
  run_slots_ = slots;
  prev_hook_ = setAllocationHook(this);
  hooked_ = true;
  capture_.startRun();
  if (phase_ == Phase::kProfiling) {
    profile_.start(values_);
    return;
  }
  char* base = slab_.base();
  for (const ManagedRecord& v : values_) {
    c10::IValue& iv = slots[v.slot];
    if (v.group < 0 || !iv.isTensor()) continue;
    c10::StorageImpl* s = storage_ops::storageOf(iv.unsafeToTensorImpl());
    if (!s) continue;
    void* p = base + slab_.offset(v.group);
    s->set_data_ptr_noswap(c10::DataPtr(p, p, nullptr, c10::Device(c10::kCPU)));
    s->set_nbytes(slab_.bytes(v.group));
  }
}

bool BlockMemory::finish(c10::IValue* slots) {
  unhook();
  capture_.finishRun();
  if (phase_ == Phase::kProfiling) profile_.finish(slots, values_);
  if (phase_ != Phase::kPlanned || !slab_.singletons()) return slowFinish(slots);
  // Read-only pass first: anything unusual goes to the slow path before we mutate.
  for (ManagedRecord& v : values_) {
    c10::IValue& iv = slots[v.slot];
    if (!iv.isTensor()) {
      v.cur = nullptr;
      continue;
    }
    c10::TensorImpl* t = iv.unsafeToTensorImpl();
    c10::StorageImpl* s = storage_ops::storageOf(t);
    if (!s || v.group < 0 || useCount(t) != 1 || useCount(s) != 1 || s->nbytes() > slab_.bytes(v.group))
      return slowFinish(slots);
    v.cur = s;
  }
  for (const ManagedRecord& v : values_)
    if (v.cur) storage_ops::detach(v.cur);
  for (uint32_t e : evicted_slots_) slots[e] = c10::IValue();
  return false;
}

bool BlockMemory::slowFinish(c10::IValue* slots) {
  Regrouping r = regroup(slots, values_, slab_, phase_ != Phase::kPlanned);
  for (uint32_t e : evicted_slots_) slots[e] = c10::IValue();
  if (dropEvicted(slots, r)) r.changed = true;
  if (!r.changed) return false;
  // Every storage was detached (or copied out) by regroup(), so the old slab is free.
  const std::vector<int32_t> scratch = capture_.addScratchSpecs(values_, plan_scratch_, r.specs);
  slab_.layOut(std::move(r.specs), r.new_group, scratch, values_, /*replan=*/phase_ != Phase::kProfiling);
  phase_ = Phase::kPlanned;
  return true;
}

bool BlockMemory::dropEvicted(c10::IValue* slots, Regrouping& r) {
  size_t kept = 0;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (r.evict[i]) {
      const uint32_t slot = values_[i].slot;
      slots[slot] = c10::IValue();
      evicted_slots_.push_back(slot);
      ++evictions_;
      LOG_FIRST_N(WARNING, 4) << "brisk: a managed tensor (slot " << slot
                              << ") is referenced after its block ended; it is no longer planned";
      continue;
    }
    if (kept != i) {
      values_[kept] = std::move(values_[i]);
      r.new_group[kept] = r.new_group[i];
    }
    ++kept;
  }
  if (kept == values_.size()) return false;
  values_.resize(kept);
  r.new_group.resize(kept);
  rebuildSlotIndex();
  return true;
}

void BlockMemory::abort(c10::IValue* slots) noexcept {
  unhook();
  capture_.disarm();
  for (const ManagedRecord& v : values_) {
    c10::IValue& iv = slots[v.slot];
    if (iv.isTensor()) {
      c10::TensorImpl* t = iv.unsafeToTensorImpl();
      if (c10::StorageImpl* s = storage_ops::storageOf(t); s && slab_.inSlab(s->data())) {
        if (useCount(t) == 1 && useCount(s) == 1) {
          storage_ops::detach(s);
        } else {
          try {
            storage_ops::copyOut(s);
          } catch (...) {
            LOG(ERROR) << "brisk: out of memory copying a tensor out of the slab";
          }
        }
      }
    }
    iv = c10::IValue();
  }
  for (uint32_t e : evicted_slots_) slots[e] = c10::IValue();
}

void BlockMemory::addStats(MemoryStats& s) const {
  slab_.addStats(s);
  s.evictions += evictions_;
  capture_.addStats(s);
  profile_.addStats(s);
}

bool BlockMemory::mapLarge(size_t nbytes) { return phase_ == Phase::kProfiling && nbytes >= kMapLargeBytes; }

int32_t BlockMemory::beginCapture(uint32_t slot) noexcept {
  if (capture_.armed() || slot >= index_of_slot_.size()) return -1;  // nested capture: inner one is not served
  const int32_t i = index_of_slot_[slot];
  if (i < 0) return -1;
  return capture_.begin(i, values_[i], slab_, phase_ != Phase::kProfiling);
}

void BlockMemory::endCapture(int32_t i, const at::Tensor& result) noexcept {
  if (i != capture_.armedIndex() || i < 0) return;
  switch (capture_.end(result, values_[i].capture)) {
    case CaptureLearner::Outcome::kNone:
      break;
    case CaptureLearner::Outcome::kScratchGrew:
      if (plan_scratch_) requestReplan();
      break;
    case CaptureLearner::Outcome::kOutlived:
      // Abandon (leak) this slab, stop capturing in this block, and lay out a fresh
      // slab after this run.
      slab_.abandon();
      for (ManagedRecord& v : values_) v.capture.state = CaptureState::kNever;
      requestReplan();
      break;
  }
}

// --- OutputCapture --------------------------------------------------------------------

OutputCapture::OutputCapture(KernelContext& ctx, size_t output) noexcept {
  auto* mem = dynamic_cast<BlockMemory*>(allocationHook());
  if (!mem) return;
  const auto slot = static_cast<uint32_t>(&ctx.output(output) - ctx.slots_);
  index_ = mem->beginCaptureFor(ctx.slots_, slot);
  if (index_ >= 0) mem_ = mem;
}

OutputCapture::~OutputCapture() {
  if (mem_) mem_->endCapture(index_, at::Tensor());
}

UnplannedAllocations::UnplannedAllocations() noexcept : saved_(setAllocationHook(nullptr)) {}
UnplannedAllocations::~UnplannedAllocations() { setAllocationHook(static_cast<AllocationHook*>(saved_)); }

void OutputCapture::done(const at::Tensor& result) noexcept {
  if (!mem_) return;
  mem_->endCapture(index_, result);
  mem_ = nullptr;
}

}  // namespace brisk
