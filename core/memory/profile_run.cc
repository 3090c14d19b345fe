#include "core/memory/profile_run.h"

#include <algorithm>

#include "core/memory/storage_ops.h"

namespace brisk {

void ProfileRun::freeDead(c10::IValue* slots, std::vector<ManagedRecord>& values) {
  using storage_ops::useCount;
  // The newest managed producer that has run: every step before it has finished (serial
  // block), so a managed value whose last reader comes before it is dead.
  int64_t newest = -1;
  for (const ManagedRecord& v : values)
    if (slots[v.slot].isTensor()) newest = std::max<int64_t>(newest, v.first);
  size_t live = 0;
  for (ManagedRecord& v : values) {
    c10::IValue& iv = slots[v.slot];
    if (!iv.isTensor()) continue;
    c10::TensorImpl* t = iv.unsafeToTensorImpl();
    c10::StorageImpl* s = storage_ops::storageOf(t);
    if (!s || !s->data()) continue;
    if (!v.freed && static_cast<int64_t>(v.last) < newest && useCount(t) == 1 && useCount(s) == 1) {
      v.max_bytes = std::max(v.max_bytes, s->nbytes());
      storage_ops::detach(s);
      v.freed = true;
      continue;
    }
    live += s->nbytes();
  }
  peak_ = std::max(peak_, live);
}

void ProfileRun::finish(const c10::IValue* slots, const std::vector<ManagedRecord>& values) {
  size_t live = 0, total = 0;
  for (const ManagedRecord& v : values) {
    c10::StorageImpl* s = storage_ops::storageOf(slots[v.slot]);
    const size_t nb = s && s->data() ? s->nbytes() : 0;
    live += nb;
    total += std::max(nb, v.max_bytes);
  }
  peak_ = std::max(peak_, live);
  total_ = total;
}

}  // namespace brisk
