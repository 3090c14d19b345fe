#include "core/memory/regroup.h"

#include <algorithm>

#include "core/memory/storage_ops.h"

namespace brisk {
namespace {

using storage_ops::useCount;

struct Holder {
  c10::StorageImpl* s;
  c10::TensorImpl* t;
  uint32_t i;  // value
};

// Holders sorted by storage, then tensor, so each storage's holders are adjacent.
std::vector<Holder> collectHolders(c10::IValue* slots, const std::vector<ManagedRecord>& values,
                                   std::vector<uint8_t>& evict) {
  std::vector<Holder> holders;
  for (size_t i = 0; i < values.size(); ++i) {
    c10::IValue& v = slots[values[i].slot];
    if (!v.isTensor()) continue;
    c10::TensorImpl* t = v.unsafeToTensorImpl();
    c10::StorageImpl* s = storage_ops::storageOf(t);
    if (!s) {
      evict[i] = 1;  // no CPU storage we can place (opaque, undefined, ...)
      continue;
    }
    holders.push_back({s, t, static_cast<uint32_t>(i)});
  }
  std::sort(holders.begin(), holders.end(), [](const Holder& a, const Holder& b) {
    return a.s != b.s ? a.s < b.s : a.t < b.t;
  });
  return holders;
}

// True when something besides the holders [a, b) references their storage or tensors.
bool referencedElsewhere(const std::vector<Holder>& holders, size_t a, size_t b) {
  size_t tensors = 0;
  bool foreign = false;
  for (size_t x = a; x < b;) {
    size_t y = x;
    while (y < b && holders[y].t == holders[x].t) ++y;
    if (useCount(holders[x].t) != y - x) foreign = true;
    ++tensors;
    x = y;
  }
  return foreign || useCount(holders[a].s) != tensors;
}

}  // namespace

Regrouping regroup(c10::IValue* slots, std::vector<ManagedRecord>& values, const SlabPlan& slab, bool changed) {
  Regrouping r;
  r.changed = changed;
  r.evict.assign(values.size(), 0);
  r.new_group.assign(values.size(), -1);
  const std::vector<Holder> holders = collectHolders(slots, values, r.evict);
  std::vector<c10::StorageImpl*> owner(slab.numGroups(), nullptr);  // planned group -> storage seen
  for (size_t a = 0, b = 0; a < holders.size(); a = b) {
    while (b < holders.size() && holders[b].s == holders[a].s) ++b;
    c10::StorageImpl* s = holders[a].s;
    if (referencedElsewhere(holders, a, b)) {
      // Keep its bytes valid for whoever holds it, and stop managing these values.
      if (slab.inSlab(s->data())) storage_ops::copyOut(s);
      for (size_t x = a; x < b; ++x) r.evict[holders[x].i] = 1;
      continue;
    }
    const size_t nb = s->nbytes();
    const int32_t g0 = values[holders[a].i].group;
    if (g0 < 0 || owner[g0] != nullptr) r.changed = true;  // new, or merged with another storage
    if (g0 >= 0) {
      owner[g0] = s;
      if (nb > slab.bytes(g0)) r.changed = true;  // outgrew its plan
    }
    planners::AllocationSpec spec{0, UINT32_MAX, 0};
    for (size_t x = a; x < b; ++x) {
      ManagedRecord& v = values[holders[x].i];
      if (v.group != g0) r.changed = true;  // split from its planned group
      v.max_bytes = std::max(v.max_bytes, nb);
      spec.size = std::max(spec.size, v.max_bytes);
      spec.first = std::min(spec.first, v.first);
      spec.last = std::max(spec.last, v.last);
      r.new_group[holders[x].i] = static_cast<int32_t>(r.specs.size());
    }
    r.specs.push_back(spec);
    storage_ops::detach(s);
  }
  return r;
}

}  // namespace brisk
