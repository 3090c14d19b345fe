#include "core/memory_plan.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/StorageImpl.h>
#include <c10/core/TensorImpl.h>
#include <glog/logging.h>

#include <algorithm>
#include <cstring>

#include "core/escape_analysis.h"
#include "core/execution_plan.h"
#include "core/graph.h"
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
      size_t last = i;
      for (size_t j = i + 1; j < n; ++j) {
        bool read = false;
        for (const Value* r : reads[j])
          if (in_set[r->id()] == stamp) {
            read = true;
            break;
          }
        if (!read) continue;
        last = j;
        // Outputs of a node that may alias what it read join the set. A node with
        // sub-blocks is treated as aliasing everything it (or its blocks) read.
        bool aliases = !nodes[j]->blocks().empty();
        for (const Value* e : edges[j]) aliases = aliases || in_set[e->id()] == stamp;
        if (aliases)
          for (const Value* o : nodes[j]->outputs()) in_set[o->id()] = stamp;
      }
      eb.managed.push_back(ManagedValue{out->id(), static_cast<uint32_t>(i), static_cast<uint32_t>(last)});
    }
  }
}

// --- Run time --------------------------------------------------------------------

namespace {

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

BlockMemory::BlockMemory(const ExecBlock& block, const planners::LayoutAlgorithm& layout)
    : conflicts_(block.managed_conflicts), layout_(&layout) {
  for (const ManagedValue& m : block.managed) {
    orig_.push_back(static_cast<uint32_t>(orig_.size()));
    slot_.push_back(m.slot);
    first_.push_back(m.first);
    last_.push_back(m.last);
  }
  group_.assign(slot_.size(), -1);
  max_bytes_.assign(slot_.size(), 0);
  cur_.assign(slot_.size(), nullptr);
}

BlockMemory::~BlockMemory() = default;

void BlockMemory::prepare(c10::IValue* slots) {
  if (!planned_) return;
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
  if (!planned_ || !singletons_) return slowFinish(slots);
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
  bool changed = !planned_;
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
  if (!changed) return false;

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
  slab_ = c10::DataPtr();
  slab_ = c10::GetCPUAllocator()->allocate(plan.total_size);
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
}

}  // namespace brisk
