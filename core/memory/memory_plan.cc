#include "core/memory/memory_plan.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/StorageImpl.h>
#include <c10/core/TensorImpl.h>
#include <glog/logging.h>

#include <malloc.h>

#include <algorithm>
#include <mutex>
#include <cstring>

#include "core/graph/escape_analysis.h"
#include "core/executor/execution_plan.h"
#include "core/graph/graph.h"
#include "core/kernels/output_capture.h"
#include "planners/bump.h"

namespace brisk {

// --- Load time -------------------------------------------------------------------

void planManagedValues(const Graph& graph, const std::vector<uint8_t>& retained, ExecBlock& eb) {
  eb.managed.clear();
  const auto& nodes = eb.source->nodes();
  const size_t n = nodes.size();
  std::vector<std::vector<const Value*>> reads(n);
  std::vector<std::vector<Value*>> edges(n);
  for (size_t i = 0; i < n; ++i) {
    collectReads(nodes[i], reads[i]);
    edges[i] = aliasedInputs(*nodes[i]);
  }
  // in_set[id] == stamp: the value is the managed tensor being followed or may alias it.
  std::vector<uint32_t> in_set(graph.numValues(), 0);
  uint32_t stamp = 0;
  for (size_t i = 0; i < n; ++i) {
    for (const Value* out : nodes[i]->outputs()) {
      if (!retained[out->id()] || out->type()->kind() != c10::TypeKind::TensorType) continue;
      ++stamp;
      in_set[out->id()] = stamp;
      std::vector<uint32_t> readers;
      for (size_t j = i + 1; j < n; ++j) {
        bool read = false;
        for (const Value* r : reads[j])
          if (in_set[r->id()] == stamp) {
            read = true;
            break;
          }
        if (!read) continue;
        readers.push_back(static_cast<uint32_t>(j));
        // Outputs of a node that may alias what it read join the set. A node with
        // sub-blocks is treated as aliasing everything it (or its blocks) read.
        bool aliases = !nodes[j]->blocks().empty();
        for (const Value* e : edges[j]) aliases = aliases || in_set[e->id()] == stamp;
        if (aliases)
          for (const Value* o : nodes[j]->outputs()) in_set[o->id()] = stamp;
      }
      const auto first = static_cast<uint32_t>(i);
      const uint32_t last = readers.empty() ? first : readers.back();
      eb.managed.push_back(ManagedValue{out->id(), first, last, std::move(readers)});
    }
  }
}

// --- Run time --------------------------------------------------------------------

namespace {

// Slabs a kernel may still reference after they were abandoned (see slowFinish): never
// freed, but kept reachable here rather than released, so the leak is deliberate and
// bounded (one slab per block, then capture stops) instead of invisible, and leak
// checkers see live memory.
void abandonSlab(c10::DataPtr slab) {
  static std::mutex mu;
  static auto* abandoned = new std::vector<c10::DataPtr>();
  std::lock_guard<std::mutex> lock(mu);
  abandoned->push_back(std::move(slab));
}

size_t useCount(c10::intrusive_ptr_target* p) { return c10::raw::intrusive_ptr::use_count(p); }

void detach(c10::StorageImpl* s) {
  s->set_data_ptr_noswap(c10::DataPtr(nullptr, c10::Device(c10::kCPU)));
  s->set_nbytes(0);
}

// Gives a storage that lives in the slab its own copy of its bytes.
void copyOut(c10::StorageImpl* s) {
  const size_t nb = s->nbytes();
  c10::Allocator* alloc = s->allocator() ? s->allocator() : c10::GetCPUAllocator();
  c10::DataPtr d = alloc->allocate(nb);
  if (nb) std::memcpy(d.get(), s->data(), nb);
  s->set_data_ptr_noswap(std::move(d));
}

// The CPU storage of a slot's tensor, or null when it has none we can manage.
c10::StorageImpl* storageOf(c10::TensorImpl* t) {
  if (!t->has_storage()) return nullptr;
  c10::StorageImpl* s = t->unsafe_storage().unsafeGetStorageImpl();
  if (!s || s->device_type() != c10::kCPU || !s->resizable()) return nullptr;
  return s;
}

}  // namespace

BlockMemory::BlockMemory(const ExecBlock& block, const planners::LayoutAlgorithm& layout, bool plan_scratch)
    : conflicts_(block.managed_conflicts), plan_scratch_(plan_scratch), layout_(&layout) {
  for (const ManagedValue& m : block.managed) {
    orig_.push_back(static_cast<uint32_t>(orig_.size()));
    slot_.push_back(m.slot);
    first_.push_back(m.first);
    last_.push_back(m.last);
  }
  group_.assign(slot_.size(), -1);
  max_bytes_.assign(slot_.size(), 0);
  cur_.assign(slot_.size(), nullptr);
  capture_ordinal_.assign(slot_.size(), kLearn);
  capture_bytes_.assign(slot_.size(), 0);
  call_sizes_.assign(slot_.size(), {});
  scratch_need_.assign(slot_.size(), 0);
  scratch_group_.assign(slot_.size(), -1);
  freed_.assign(slot_.size(), 0);
  rebuildSlotIndex();
  // Capturing allocating kernels' outputs needs brisk's allocator in front of the
  // default one (once per process); without it those outputs are simply not captured.
  installCaptureAllocator();
  // Under the parallel executor steps finish out of order: no lean profile run.
  lean_ = !conflicts_;
}

BlockMemory::~BlockMemory() {
  if (hooked_) setAllocationHook(prev_hook_);
  releaseSlab();
}

void BlockMemory::rebuildSlotIndex() {
  uint32_t max_slot = 0;
  for (uint32_t s : slot_) max_slot = std::max(max_slot, s);
  index_of_slot_.assign(slot_.empty() ? 0 : max_slot + 1, -1);
  for (size_t i = 0; i < slot_.size(); ++i) index_of_slot_[slot_[i]] = static_cast<int32_t>(i);
}

void BlockMemory::releaseSlab() {
  unregisterSlab(slab_.get());
  slab_ = c10::DataPtr();
}

void BlockMemory::prepare(c10::IValue* slots) {
  // This block's kernels allocate on this thread until finish()/abort(): see serve().
  run_slots_ = slots;
  prev_hook_ = setAllocationHook(this);
  hooked_ = true;
  captured_ = misses_ = scratch_served_ = 0;
  if (!planned_) {
    std::fill(freed_.begin(), freed_.end(), 0);
    return;
  }
  char* base = static_cast<char*>(slab_.get());
  const size_t n = slot_.size();
  for (size_t i = 0; i < n; ++i) {
    const int32_t g = group_[i];
    c10::IValue& v = slots[slot_[i]];
    if (g < 0 || !v.isTensor()) continue;
    c10::StorageImpl* s = storageOf(v.unsafeToTensorImpl());
    if (!s) continue;
    void* p = base + offset_[g];
    s->set_data_ptr_noswap(c10::DataPtr(p, p, nullptr, c10::Device(c10::kCPU)));
    s->set_nbytes(bytes_[g]);
  }
}

bool BlockMemory::finish(c10::IValue* slots) {
  if (hooked_) {
    setAllocationHook(prev_hook_);
    hooked_ = false;
  }
  arm_index_ = -1;
  last_captured_ = captured_;
  last_misses_ = misses_;
  last_scratch_served_ = scratch_served_;
  if (!planned_) {
    // End of the profile run: whatever is still held is live at once now.
    size_t live = 0, total = 0;
    for (size_t i = 0; i < slot_.size(); ++i) {
      const c10::IValue& v = slots[slot_[i]];
      c10::StorageImpl* s = v.isTensor() ? storageOf(v.unsafeToTensorImpl()) : nullptr;
      const size_t nb = s && s->data() ? s->nbytes() : 0;
      live += nb;
      total += std::max(nb, max_bytes_[i]);
    }
    profile_peak_ = std::max(profile_peak_, live);
    profile_total_ = total;
  }
  if (!planned_ || !singletons_ || force_replan_) return slowFinish(slots);
  const size_t n = slot_.size();
  // Read-only pass first: anything unusual goes to the slow path before we mutate.
  for (size_t i = 0; i < n; ++i) {
    c10::IValue& v = slots[slot_[i]];
    if (!v.isTensor()) {
      cur_[i] = nullptr;
      continue;
    }
    c10::TensorImpl* t = v.unsafeToTensorImpl();
    c10::StorageImpl* s = storageOf(t);
    const int32_t g = group_[i];
    if (!s || g < 0 || useCount(t) != 1 || useCount(s) != 1 || s->nbytes() > bytes_[g]) return slowFinish(slots);
    cur_[i] = s;
  }
  for (size_t i = 0; i < n; ++i)
    if (cur_[i]) detach(cur_[i]);
  for (uint32_t e : evicted_slots_) slots[e] = c10::IValue();
  return false;
}

bool BlockMemory::slowFinish(c10::IValue* slots) {
  const size_t n = slot_.size();
  struct Holder {
    c10::StorageImpl* s;
    c10::TensorImpl* t;
    uint32_t i;
  };
  std::vector<Holder> holders;
  std::vector<uint8_t> evict(n, 0);
  bool changed = !planned_ || force_replan_;
  for (size_t i = 0; i < n; ++i) {
    c10::IValue& v = slots[slot_[i]];
    if (!v.isTensor()) continue;
    c10::TensorImpl* t = v.unsafeToTensorImpl();
    c10::StorageImpl* s = storageOf(t);
    if (!s) {
      evict[i] = 1;  // no CPU storage we can place (opaque, undefined, ...)
      continue;
    }
    holders.push_back({s, t, static_cast<uint32_t>(i)});
  }
  std::sort(holders.begin(), holders.end(), [](const Holder& a, const Holder& b) {
    return a.s != b.s ? a.s < b.s : a.t < b.t;
  });
  // One group per storage still held only by managed slots.
  std::vector<int32_t> new_group(n, -1);
  std::vector<planners::AllocationSpec> specs;
  force_replan_ = false;
  std::vector<c10::StorageImpl*> owner(offset_.size(), nullptr);  // planned group -> storage seen
  for (size_t a = 0; a < holders.size();) {
    size_t b = a;
    while (b < holders.size() && holders[b].s == holders[a].s) ++b;
    c10::StorageImpl* s = holders[a].s;
    size_t tensors = 0;
    bool foreign = false;
    for (size_t x = a; x < b;) {
      size_t y = x;
      while (y < b && holders[y].t == holders[x].t) ++y;
      if (useCount(holders[x].t) != y - x) foreign = true;
      ++tensors;
      x = y;
    }
    if (useCount(s) != tensors) foreign = true;
    if (foreign) {
      // Referenced from outside the managed slots after the block: keep its bytes
      // valid for whoever holds it, and stop managing these values.
      if (inSlab(s->data())) copyOut(s);
      for (size_t x = a; x < b; ++x) evict[holders[x].i] = 1;
      a = b;
      continue;
    }
    const size_t nb = s->nbytes();
    const int32_t g0 = group_[holders[a].i];
    if (g0 < 0 || owner[g0] != nullptr) changed = true;  // new, or merged with another storage
    if (g0 >= 0) {
      owner[g0] = s;
      if (nb > bytes_[g0]) changed = true;  // outgrew its plan
    }
    planners::AllocationSpec spec{0, UINT32_MAX, 0};
    for (size_t x = a; x < b; ++x) {
      const uint32_t i = holders[x].i;
      if (group_[i] != g0) changed = true;  // split from its planned group
      max_bytes_[i] = std::max(max_bytes_[i], nb);
      spec.size = std::max(spec.size, max_bytes_[i]);
      spec.first = std::min(spec.first, first_[i]);
      spec.last = std::max(spec.last, last_[i]);
      new_group[i] = static_cast<int32_t>(specs.size());
    }
    specs.push_back(spec);
    detach(s);
    a = b;
  }
  for (uint32_t e : evicted_slots_) slots[e] = c10::IValue();
  // Drop evicted values from the managed arrays (their slots are cleared every run).
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (evict[i]) {
      slots[slot_[i]] = c10::IValue();
      evicted_slots_.push_back(slot_[i]);
      ++evictions_;
      changed = true;
      LOG_FIRST_N(WARNING, 4) << "brisk: a managed tensor (slot " << slot_[i]
                              << ") is referenced after its block ended; it is no longer planned";
      continue;
    }
    slot_[kept] = slot_[i];
    orig_[kept] = orig_[i];
    first_[kept] = first_[i];
    last_[kept] = last_[i];
    group_[kept] = group_[i];
    max_bytes_[kept] = max_bytes_[i];
    new_group[kept] = new_group[i];
    capture_ordinal_[kept] = capture_ordinal_[i];
    capture_bytes_[kept] = capture_bytes_[i];
    scratch_need_[kept] = scratch_need_[i];
    if (kept != i) call_sizes_[kept] = std::move(call_sizes_[i]);  // never self-move (empties it)
    freed_[kept] = freed_[i];
    ++kept;
  }
  slot_.resize(kept);
  orig_.resize(kept);
  first_.resize(kept);
  last_.resize(kept);
  group_.resize(kept);
  max_bytes_.resize(kept);
  cur_.resize(kept);
  new_group.resize(kept);
  capture_ordinal_.resize(kept);
  capture_bytes_.resize(kept);
  scratch_need_.resize(kept);
  call_sizes_.resize(kept);
  scratch_group_.resize(kept);
  freed_.resize(kept);
  if (kept != n) rebuildSlotIndex();
  if (!changed) return false;

  // Scratch of capturing kernels: live during the producer's step only. Serial blocks
  // only (the parallel conflict relation is over managed values).
  std::vector<int32_t> new_scratch(kept, -1);
  scratch_bytes_ = 0;
  if (!conflicts_ && plan_scratch_)
    for (size_t i = 0; i < kept; ++i)
      if (capture_ordinal_[i] >= 0 && scratch_need_[i] > 0) {
        new_scratch[i] = static_cast<int32_t>(specs.size());
        planners::AllocationSpec spec{};
        spec.size = scratch_need_[i];
        spec.first = spec.last = first_[i];
        specs.push_back(spec);
        scratch_bytes_ += scratch_need_[i];
      }

  // (Re)plan: every storage was detached (or copied out) above, so the old slab is free.
  // Groups in step order (ties: producer order), so layouts that break ties by index
  // see the buffers in program order rather than in storage-address order.
  std::vector<uint32_t> order(specs.size());
  for (uint32_t g = 0; g < order.size(); ++g) order[g] = g;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return specs[a].first != specs[b].first ? specs[a].first < specs[b].first : specs[a].last < specs[b].last;
  });
  std::vector<int32_t> rank(specs.size());
  planners::PlanningProblem problem;
  for (uint32_t k = 0; k < order.size(); ++k) {
    rank[order[k]] = static_cast<int32_t>(k);
    problem.specs.push_back(specs[order[k]]);
  }
  for (int32_t& g : new_group)
    if (g >= 0) g = rank[g];
  group_ = new_group;
  for (int32_t& g : new_scratch)
    if (g >= 0) g = rank[g];
  scratch_group_ = new_scratch;
  if (conflicts_) {
    // Parallel block: groups conflict when any of their values may be live together in
    // some schedule of the DAG (the serial intervals are not enough).
    auto members = std::make_shared<std::vector<std::vector<uint32_t>>>(problem.specs.size());
    for (size_t i = 0; i < group_.size(); ++i)
      if (group_[i] >= 0) (*members)[group_[i]].push_back(orig_[i]);
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
  releaseSlab();
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
  std::vector<uint32_t> members(problem.specs.size(), 0);
  placed_ = 0;
  for (size_t g = 0; g < problem.specs.size(); ++g) bytes_[g] = problem.specs[g].size;
  for (int32_t g : group_)
    if (g >= 0) {
      ++members[g];
      ++placed_;
    }
  singletons_ = std::all_of(members.begin(), members.end(), [](uint32_t m) { return m <= 1; });
  if (planned_) ++replans_;
  planned_ = true;
  ++plans_;
  return true;
}

void BlockMemory::abort(c10::IValue* slots) noexcept {
  if (hooked_) {
    setAllocationHook(prev_hook_);
    hooked_ = false;
  }
  arm_index_ = -1;
  for (uint32_t slot : slot_) {
    c10::IValue& v = slots[slot];
    if (v.isTensor()) {
      c10::TensorImpl* t = v.unsafeToTensorImpl();
      if (c10::StorageImpl* s = storageOf(t); s && inSlab(s->data())) {
        if (useCount(t) == 1 && useCount(s) == 1) {
          detach(s);
        } else {
          try {
            copyOut(s);
          } catch (...) {
            LOG(ERROR) << "brisk: out of memory copying a tensor out of the slab";
          }
        }
      }
    }
    v = c10::IValue();
  }
  for (uint32_t e : evicted_slots_) slots[e] = c10::IValue();
}

void BlockMemory::addStats(MemoryStats& s) const {
  s.slab_bytes += slab_bytes_;
  s.lower_bound += lower_bound_;
  s.managed_tensors += placed_;
  s.plans += plans_;
  s.replans += replans_;
  s.evictions += evictions_;
  s.captured_outputs += last_captured_;
  s.capture_misses += last_misses_;
  s.scratch_allocations += last_scratch_served_;
  s.scratch_bytes += scratch_bytes_;
  s.profile_peak_bytes += profile_peak_;
  s.profile_total_bytes += profile_total_;
}

// --- Capture of allocating kernels' outputs, lean profile run -------------------------

namespace {
// c10's CPU allocations are 64-byte aligned; scratch is carved in the same steps.
size_t alignedBytes(size_t n) { return (n + 63) & ~size_t{63}; }

// Profile-run allocations at least this large get their own mapping.
constexpr size_t kMapLargeBytes = 1 << 20;

// Allocations at least this large trigger the lean profile run's check for dead managed
// tensors (smaller ones cannot move the peak much; the check is a pass over the block's
// managed slots).
constexpr size_t kLeanCheckBytes = 64 << 10;
}  // namespace

void BlockMemory::freeDeadDuringProfile() {
  c10::IValue* slots = run_slots_;
  const size_t n = slot_.size();
  // The newest managed producer that has run: every step before it has finished (serial
  // block), so a managed value whose last reader comes before it is dead.
  int64_t newest = -1;
  for (size_t i = 0; i < n; ++i)
    if (slots[slot_[i]].isTensor()) newest = std::max<int64_t>(newest, first_[i]);
  size_t live = 0;
  for (size_t i = 0; i < n; ++i) {
    c10::IValue& v = slots[slot_[i]];
    if (!v.isTensor()) continue;
    c10::TensorImpl* t = v.unsafeToTensorImpl();
    c10::StorageImpl* s = storageOf(t);
    if (!s || !s->data()) continue;
    if (!freed_[i] && static_cast<int64_t>(last_[i]) < newest && useCount(t) == 1 && useCount(s) == 1) {
      max_bytes_[i] = std::max(max_bytes_[i], s->nbytes());
      detach(s);
      freed_[i] = 1;
      continue;
    }
    live += s->nbytes();
  }
  profile_peak_ = std::max(profile_peak_, live);
}

int32_t BlockMemory::beginCapture(uint32_t slot) noexcept {
  if (arm_index_ >= 0 || slot >= index_of_slot_.size()) return -1;  // nested capture: inner one is not served
  const int32_t i = index_of_slot_[slot];
  if (i < 0 || capture_ordinal_[i] == kNever) return -1;
  arm_count_ = 0;
  arm_at_ = nullptr;  // learning
  scratch_at_ = scratch_end_ = nullptr;
  if (capture_ordinal_[i] >= 0) {
    const int32_t g = group_[i];
    // Serve only into this value's own planned region, and only what fits in it.
    if (!planned_ || g < 0 || capture_bytes_[i] > bytes_[g]) {
      capture_ordinal_[i] = kLearn;
    } else {
      char* base = static_cast<char*>(slab_.get());
      arm_at_ = base + offset_[g];
      if (const int32_t sg = scratch_group_[i]; sg >= 0) {
        scratch_at_ = base + offset_[sg];
        scratch_end_ = scratch_at_ + bytes_[sg];
        beginScratch(scratch_at_, bytes_[sg]);
      }
    }
  }
  arm_index_ = i;
  return i;
}

void* BlockMemory::serve(size_t nbytes) {
  if (arm_index_ < 0) {
    if (!planned_ && lean_ && nbytes >= kLeanCheckBytes) freeDeadDuringProfile();
    return nullptr;
  }
  const uint32_t k = arm_count_++;
  if (!arm_at_) {
    if (!planned_ && lean_ && nbytes >= kLeanCheckBytes) freeDeadDuringProfile();
    return nullptr;
  }
  const int32_t i = arm_index_;
  if (static_cast<int32_t>(k) == capture_ordinal_[i] && nbytes == capture_bytes_[i]) return arm_at_;
  const std::vector<size_t>& learned = call_sizes_[i];
  const size_t need = alignedBytes(nbytes);
  if (scratch_at_ && nbytes > 0 && k < learned.size() && learned[k] == nbytes &&
      need <= static_cast<size_t>(scratch_end_ - scratch_at_)) {
    void* p = scratch_at_;
    scratch_at_ += need;
    ++scratch_served_;
    return p;
  }
  return nullptr;
}

bool BlockMemory::mapLarge(size_t nbytes) { return !planned_ && nbytes >= kMapLargeBytes; }

void BlockMemory::allocated(size_t nbytes, void* p) {
  if (arm_index_ < 0 || arm_at_) return;
  const uint32_t k = arm_count_ - 1;  // serve() counted it
  if (k < kRecorded) {
    rec_ptr_[k] = p;
    rec_bytes_[k] = nbytes;
  }
}

void BlockMemory::endCapture(int32_t i, const at::Tensor& result) noexcept {
  if (i != arm_index_ || i < 0) return;
  const c10::StorageImpl* s =
      result.defined() && result.has_storage() ? result.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl()
                                               : nullptr;
  const void* data = s ? s->data() : nullptr;
  const size_t nb = s ? s->nbytes() : 0;
  if (!arm_at_) {
    // Learning: the latest allocation at the result's address (malloc may have reused
    // the address of a temporary freed earlier in the call) of exactly its size.
    int32_t found = kNever;
    const uint32_t seen = std::min(arm_count_, kRecorded);
    for (uint32_t k = 0; k < seen; ++k)
      if (data && rec_ptr_[k] == data && rec_bytes_[k] == nb) found = static_cast<int32_t>(k);
    capture_ordinal_[i] = found;
    capture_bytes_[i] = nb;
    if (found >= 0) {
      // Everything else the call allocated is its scratch; a need larger than planned
      // (first learning, or shapes grew) lays out the slab again after this run.
      call_sizes_[i].assign(rec_bytes_, rec_bytes_ + seen);
      size_t need = 0;
      for (uint32_t k = 0; k < seen; ++k)
        if (static_cast<int32_t>(k) != found) need += alignedBytes(rec_bytes_[k]);
      if (need > scratch_need_[i]) {
        scratch_need_[i] = need;
        if (planned_ && !conflicts_ && plan_scratch_) force_replan_ = true;
      }
    }
  } else {
    const bool scratch_leaked = scratch_end_ && endScratch() > 0;
    const bool hit = data == arm_at_;
    if (hit) ++captured_;
    else ++misses_;
    if (scratch_leaked || (!hit && servedAllocationLive(arm_at_))) {
      // A served buffer that is not the result is still referenced by something that
      // outlives the call: its bytes must never be handed out again. Abandon (leak) this
      // slab, stop capturing in this block, and lay out a fresh slab after this run.
      LOG(WARNING) << "brisk: a captured allocation outlived its kernel call; capture disabled for this block";
      abandonSlab(std::move(slab_));
      slab_ = c10::DataPtr();
      std::fill(capture_ordinal_.begin(), capture_ordinal_.end(), kNever);
      force_replan_ = true;
    } else if (!hit) {
      capture_ordinal_[i] = kLearn;  // other allocations this time (shapes changed): learn again
    }
  }
  arm_index_ = -1;
  arm_at_ = nullptr;
  scratch_at_ = scratch_end_ = nullptr;
}

// --- OutputCapture --------------------------------------------------------------------

OutputCapture::OutputCapture(KernelContext& ctx, size_t output) noexcept {
  auto* mem = dynamic_cast<BlockMemory*>(allocationHook());
  if (!mem) return;
  const auto slot = static_cast<uint32_t>(&ctx.output(output) - ctx.slots());
  index_ = mem->beginCaptureFor(ctx.slots(), slot);
  if (index_ >= 0) mem_ = mem;
}

OutputCapture::~OutputCapture() {
  if (mem_) mem_->endCapture(index_, at::Tensor());
}

void OutputCapture::done(const at::Tensor& result) noexcept {
  if (!mem_) return;
  mem_->endCapture(index_, result);
  mem_ = nullptr;
}

}  // namespace brisk
