#pragma once
// Runtimes of one Module for callers on many threads. borrow() hands out an idle
// Runtime or creates one (up to a maximum; callers beyond it wait); the lease returns
// it. Runtimes idle longer than the idle limit are freed when a lease returns.
// One short lock per run, never per node. A thread gets back the runtime it used last
// when that one is idle: its slab, stack and tensors are still in that core's caches,
// where plain LIFO would hand two alternating callers each other's runtimes and move
// every run's working set between cores.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace brisk {

class Runtime;

struct RuntimePoolStats {
  size_t live = 0;       // runtimes that exist now (idle + leased)
  size_t idle = 0;
  size_t peak = 0;       // most that existed at once
  uint64_t created = 0;
  uint64_t freed = 0;    // freed for idleness
  uint64_t waits = 0;    // borrows that had to wait for the maximum
};

class RuntimePool {
 public:
  using Factory = std::function<std::unique_ptr<Runtime>()>;
  RuntimePool(Factory factory, size_t max_runtimes, int64_t idle_ms);
  ~RuntimePool();

  class Lease {
   public:
    Lease(RuntimePool* pool, std::unique_ptr<Runtime> rt);
    Lease(Lease&&) = default;
    ~Lease();
    Runtime& operator*() const { return *rt_; }
    Runtime* operator->() const { return rt_.get(); }

   private:
    RuntimePool* pool_;
    std::unique_ptr<Runtime> rt_;
    bool tracked_;  // counted in this thread's leases (runtime_pool.cc)
  };

  Lease borrow();
  RuntimePoolStats stats() const;
  // Frees every idle runtime now (e.g. under memory pressure).
  void trim();

 private:
  using Clock = std::chrono::steady_clock;
  void giveBack(std::unique_ptr<Runtime> rt);

  Factory factory_;
  size_t max_;
  std::chrono::milliseconds idle_limit_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  struct Idle {
    std::unique_ptr<Runtime> rt;
    Clock::time_point since;
    std::thread::id last_user;
  };
  std::vector<Idle> idle_;  // oldest first
  size_t waiting_ = 0;      // borrowers blocked on the maximum (notify only then)
  RuntimePoolStats stats_;
};

}  // namespace brisk
