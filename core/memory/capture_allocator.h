#pragma once
// A process-wide c10 CPU allocator that can serve chosen allocations from a memory
// plan's slab (docs/architecture.md, "Memory planning": outputs of ops without an out= form).
//
// Some kernels cannot write into a given buffer: libtorch's convolution allocates its
// result itself (oneDNN underneath). To place such a result in the slab without a copy,
// brisk installs this allocator once (c10::SetCPUAllocator, above the default's
// priority). It forwards every allocation to the allocator it replaced, except on a
// thread that has an AllocationHook installed: the hook sees each allocation first and
// may answer it with an address inside a slab it owns. A served DataPtr's deleter does
// nothing (the slab owns the bytes). Pass-through costs one thread-local load.
//
// Raw allocations (Allocator::raw_allocate, used by oneDNN's ideep wrapper) are freed
// through raw_deleter(), which cannot tell who allocated a pointer; as a safety net it
// ignores pointers inside any registered slab instead of handing them to free().
#include <c10/core/Allocator.h>

#include <cstddef>

namespace brisk {

class AllocationHook {
 public:
  virtual ~AllocationHook() = default;
  // Before an allocation of `nbytes` on the hook's thread: an address to serve it from
  // (inside a registered slab, at least `nbytes` long), or null for the normal allocator.
  virtual void* serve(size_t nbytes) = 0;
  // After an allocation was made by the normal allocator (null for 0 bytes).
  virtual void allocated(size_t nbytes, void* p) = 0;
  // True when an allocation of `nbytes` that serve() declined should get its own
  // anonymous mapping (unmapped when freed) instead of glibc's heap: a memory plan's
  // profile run, whose large tensors would otherwise fragment a heap that is never
  // trimmed and leave the process's peak far above its largest live set.
  virtual bool mapLarge(size_t nbytes) { return false; }
};

// Installs the capturing allocator (idempotent, thread-safe). False when another
// allocator with a higher priority owns the CPU device (then nothing is ever served).
bool installCaptureAllocator();

// The calling thread's hook; returns the previous one (hooks nest: restore it after).
AllocationHook* setAllocationHook(AllocationHook* hook);
AllocationHook* allocationHook();

// Slabs that served allocations may point into; see raw_deleter above.
void registerSlab(const void* p, size_t nbytes);
void unregisterSlab(const void* p);

// Memory for a slab: large slabs get their own anonymous mapping (never glibc's heap,
// where a long-lived block of tens of MiB would pin the heap top, keep freed temporaries
// from being trimmed and fragment it; unmapped at once when a re-plan replaces it),
// small ones come from the default CPU allocator.
c10::DataPtr allocateSlabMemory(size_t nbytes);

// Scratch serving on the calling thread: while a range is open, served allocations that
// fall inside [begin, begin + nbytes) are counted, and their frees (served deleter or
// raw deleter) uncounted. endScratch() closes the range and returns how many are still
// live: a kernel's temporaries must all be gone when its call returns, or the bytes
// would be handed out again under whoever kept them.
void beginScratch(const void* begin, size_t nbytes);
size_t endScratch();

// The deleter of served DataPtrs (does nothing; exposed so owners can recognise them).
void servedDataDeleter(void* p);
// True while the allocation most recently served on this thread at `p` has not been
// freed on this thread (a served buffer that outlives its kernel call would be reused
// by the slab under its owner: the owner must then stop reusing that slab).
bool servedAllocationLive(const void* p);

}  // namespace brisk
