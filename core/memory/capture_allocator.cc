#include "core/memory/capture_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "threading/inter_op_arena.h"

namespace brisk {
namespace {

thread_local AllocationHook* t_hook = nullptr;
// The hook belongs to the block running on this thread; when that block's task waits on
// an arena thread (aten::wait, the parallel executor's join) it may resume on another
// worker while this thread runs other tasks: the hook follows the task.
const bool g_hook_follows_tasks = threading::registerTaskLocal(
    {[]() -> void* { return std::exchange(t_hook, nullptr); },
     [](void* h) { t_hook = static_cast<AllocationHook*>(h); }});
thread_local const void* t_served = nullptr;  // latest served address, until freed
// The open scratch range (beginScratch) and its served allocations not yet freed.
thread_local const char* t_scratch_begin = nullptr;
thread_local const char* t_scratch_end = nullptr;
thread_local size_t t_scratch_live = 0;

bool inScratch(const void* p) {
  const char* c = static_cast<const char*>(p);
  return c >= t_scratch_begin && c < t_scratch_end;
}

// A served allocation is freed: forget it.
void servedFreed(const void* p) {
  if (p == t_served) t_served = nullptr;
  if (t_scratch_live > 0 && inScratch(p)) --t_scratch_live;
}

// Registered slab ranges [begin, end). Consulted only when a raw allocation is freed.
std::shared_mutex g_slabs_mu;
std::vector<std::pair<const char*, const char*>> g_slabs;

bool inSlab(const void* p) {
  const char* c = static_cast<const char*>(p);
  std::shared_lock<std::shared_mutex> lock(g_slabs_mu);
  for (const auto& [b, e] : g_slabs)
    if (c >= b && c < e) return true;
  return false;
}

c10::DeleterFnPtr g_base_raw_deleter = nullptr;

// Allocations given their own mapping (AllocationHook::mapLarge): address -> length.
// Raw frees cannot tell them apart, so the map is consulted while it is non-empty.
std::mutex g_mapped_mu;
std::unordered_map<void*, size_t> g_mapped;
std::atomic<size_t> g_mapped_count{0};

// Fresh zero pages of our own (not glibc's heap), or null.
void* mapPages(size_t nbytes) {
  void* p = ::mmap(nullptr, nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void* mapAnonymous(size_t nbytes) {
  void* p = mapPages(nbytes);
  if (!p) return nullptr;
  std::lock_guard<std::mutex> lock(g_mapped_mu);
  g_mapped.emplace(p, nbytes);
  g_mapped_count.store(g_mapped.size(), std::memory_order_release);
  return p;
}

// Unmaps `p` if it is one of ours; false otherwise.
bool unmapIfMapped(void* p) {
  if (g_mapped_count.load(std::memory_order_acquire) == 0) return false;
  size_t n = 0;
  {
    std::lock_guard<std::mutex> lock(g_mapped_mu);
    auto it = g_mapped.find(p);
    if (it == g_mapped.end()) return false;
    n = it->second;
    g_mapped.erase(it);
    g_mapped_count.store(g_mapped.size(), std::memory_order_release);
  }
  ::munmap(p, n);
  return true;
}

void mappedDelete(void* p) { unmapIfMapped(p); }

void rawDelete(void* p) {
  if (!p) return;
  servedFreed(p);
  if (inSlab(p) || unmapIfMapped(p)) return;
  g_base_raw_deleter(p);
}

class CaptureAllocator final : public c10::Allocator {
 public:
  explicit CaptureAllocator(c10::Allocator* base) : base_(base) {}

  c10::DataPtr allocate(size_t nbytes) override {
    AllocationHook* h = t_hook;
    if (!h) return base_->allocate(nbytes);
    if (void* p = h->serve(nbytes)) {
      if (inScratch(p))
        ++t_scratch_live;
      else
        t_served = p;
      return c10::DataPtr(p, p, &servedDataDeleter, c10::Device(c10::kCPU));
    }
    if (nbytes > 0 && h->mapLarge(nbytes)) {
      if (void* p = mapAnonymous(nbytes)) {
        h->allocated(nbytes, p);
        return c10::DataPtr(p, p, &mappedDelete, c10::Device(c10::kCPU));
      }
    }
    c10::DataPtr d = base_->allocate(nbytes);
    h->allocated(nbytes, d.get());
    return d;
  }
  c10::DeleterFnPtr raw_deleter() const override { return &rawDelete; }
  // Storage::clone copies through here; every block this allocator hands out is plain
  // host memory (the base's, the slab's or a private mapping), so memcpy is right.
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

 private:
  c10::Allocator* base_;
};

CaptureAllocator* g_allocator = nullptr;

}  // namespace

void servedDataDeleter(void* p) { servedFreed(p); }

void beginScratch(const void* begin, size_t nbytes) {
  t_scratch_begin = static_cast<const char*>(begin);
  t_scratch_end = t_scratch_begin + nbytes;
  t_scratch_live = 0;
}

size_t endScratch() {
  t_scratch_begin = t_scratch_end = nullptr;
  return std::exchange(t_scratch_live, 0);
}

bool servedAllocationLive(const void* p) { return p && p == t_served; }

namespace {

struct Mapping {
  void* p;
  size_t n;
};

void unmapSlab(void* ctx) {
  auto* m = static_cast<Mapping*>(ctx);
  ::munmap(m->p, m->n);
  delete m;
}

constexpr size_t kMapSlabBytes = 1 << 20;

}  // namespace

c10::DataPtr allocateSlabMemory(size_t nbytes) {
  if (nbytes >= kMapSlabBytes) {
    if (void* p = mapPages(nbytes))
      return c10::DataPtr(p, new Mapping{p, nbytes}, &unmapSlab, c10::Device(c10::kCPU));
  }
  return c10::GetCPUAllocator()->allocate(nbytes);
}

bool installCaptureAllocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    c10::Allocator* base = c10::GetCPUAllocator();
    if (!base->raw_deleter()) return;  // cannot forward raw frees: stay out of the way
    g_base_raw_deleter = base->raw_deleter();
    static CaptureAllocator allocator(base);
    // Priority 1 beats the default allocator's registration (0); an allocator that an
    // embedder installed with a higher priority keeps the device, and capture is off.
    c10::SetCPUAllocator(&allocator, /*priority=*/1);
    if (c10::GetCPUAllocator() == &allocator) g_allocator = &allocator;
  });
  return g_allocator != nullptr;
}

AllocationHook* setAllocationHook(AllocationHook* hook) { return std::exchange(t_hook, hook); }
AllocationHook* allocationHook() { return t_hook; }

void registerSlab(const void* p, size_t nbytes) {
  if (!p || !nbytes) return;
  const char* b = static_cast<const char*>(p);
  std::unique_lock<std::shared_mutex> lock(g_slabs_mu);
  g_slabs.emplace_back(b, b + nbytes);
}

void unregisterSlab(const void* p) {
  if (!p) return;
  std::unique_lock<std::shared_mutex> lock(g_slabs_mu);
  auto it = std::find_if(g_slabs.begin(), g_slabs.end(), [&](const auto& r) { return r.first == p; });
  if (it != g_slabs.end()) g_slabs.erase(it);
}

}  // namespace brisk
