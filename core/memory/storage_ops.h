#pragma once
// Operations on the storages of managed tensors shared by the memory layer's pieces.
#include <c10/core/CPUAllocator.h>
#include <c10/core/StorageImpl.h>
#include <c10/core/TensorImpl.h>

#include <cstring>

namespace brisk::storage_ops {

inline size_t useCount(c10::intrusive_ptr_target* p) { return c10::raw::intrusive_ptr::use_count(p); }

// Leaves the storage without memory (null data, 0 bytes) until the next run points it
// into the slab again.
inline void detach(c10::StorageImpl* s) {
  s->set_data_ptr_noswap(c10::DataPtr(nullptr, c10::Device(c10::kCPU)));
  s->set_nbytes(0);
}

// Gives a storage that lives in the slab its own copy of its bytes.
inline void copyOut(c10::StorageImpl* s) {
  const size_t nb = s->nbytes();
  c10::Allocator* alloc = s->allocator() ? s->allocator() : c10::GetCPUAllocator();
  c10::DataPtr d = alloc->allocate(nb);
  if (nb) std::memcpy(d.get(), s->data(), nb);
  s->set_data_ptr_noswap(std::move(d));
}

// The CPU storage of a slot's tensor, or null when it has none we can manage.
inline c10::StorageImpl* storageOf(c10::TensorImpl* t) {
  if (!t->has_storage()) return nullptr;
  c10::StorageImpl* s = t->unsafe_storage().unsafeGetStorageImpl();
  if (!s || s->device_type() != c10::kCPU || !s->resizable()) return nullptr;
  return s;
}

// The storage behind a slot holding a tensor, or null.
inline c10::StorageImpl* storageOf(const c10::IValue& v) {
  return v.isTensor() ? storageOf(v.unsafeToTensorImpl()) : nullptr;
}

}  // namespace brisk::storage_ops
