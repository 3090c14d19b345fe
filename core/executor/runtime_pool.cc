#include "core/executor/runtime_pool.h"

#include <algorithm>
#include <string>

#include "core/common/error.h"
#include "core/executor/runtime.h"
#include "threading/inter_op_arena.h"

namespace brisk {

namespace {
// The pools this thread holds a lease of, innermost last. A thread that asks a pool at
// its maximum for another runtime while it holds one itself (a task launcher or
// callback that calls the same Module from inside its run) would wait for its own
// lease: refused instead of a deadlock. Inter-op arena threads are left out: a task
// that suspends there may resume on another worker, so a lease can end on a thread
// other than its own (and such a thread waiting is not a wait on itself).
thread_local std::vector<const RuntimePool*> t_leased;
}  // namespace

RuntimePool::Lease::Lease(RuntimePool* pool, std::unique_ptr<Runtime> rt)
    : pool_(pool), rt_(std::move(rt)), tracked_(!threading::InterOpArena::onArenaThread()) {
  if (tracked_) t_leased.push_back(pool_);
}

RuntimePool::RuntimePool(Factory factory, size_t max_runtimes, int64_t idle_ms)
    : factory_(std::move(factory)), max_(max_runtimes), idle_limit_(idle_ms) {}

RuntimePool::~RuntimePool() = default;

RuntimePool::Lease::~Lease() {
  if (!rt_) return;  // moved from
  for (size_t i = tracked_ ? t_leased.size() : 0; i-- > 0;) {
    if (t_leased[i] == pool_) {
      t_leased.erase(t_leased.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  pool_->giveBack(std::move(rt_));
}

RuntimePool::Lease RuntimePool::borrow() {
  std::unique_lock<std::mutex> lock(mu_);
  if (idle_.empty() && max_ != 0 && stats_.live >= max_) {
    if (!threading::InterOpArena::onArenaThread() && std::find(t_leased.begin(), t_leased.end(), this) != t_leased.end())
      throw Error("a run of this Module called it again from inside the run (a task launcher or callback) while "
                  "all of its max_runtimes=" + std::to_string(max_) +
                  " runtimes are in use; it would wait for itself forever. Raise max_runtimes, or call it from "
                  "another thread");
    ++stats_.waits;
    ++waiting_;
    cv_.wait(lock, [&] { return !idle_.empty() || stats_.live < max_; });
    --waiting_;
  }
  if (!idle_.empty()) {
    // This thread's last runtime if idle, else the most recently used one.
    const auto self = std::this_thread::get_id();
    size_t pick = idle_.size() - 1;
    for (size_t i = idle_.size(); i-- > 0;) {
      if (idle_[i].last_user == self) {
        pick = i;
        break;
      }
    }
    auto rt = std::move(idle_[pick].rt);
    idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(pick));
    stats_.idle = idle_.size();
    return Lease(this, std::move(rt));
  }
  ++stats_.live;
  ++stats_.created;
  stats_.peak = std::max(stats_.peak, stats_.live);
  lock.unlock();
  try {
    return Lease(this, factory_());
  } catch (...) {
    std::lock_guard<std::mutex> relock(mu_);
    --stats_.live;
    if (waiting_ > 0) cv_.notify_one();
    throw;
  }
}

void RuntimePool::giveBack(std::unique_ptr<Runtime> rt) {
  std::vector<std::unique_ptr<Runtime>> to_free;  // destroyed outside the lock
  bool wake = false;
  const auto now = Clock::now();  // read before locking: keeps the critical section short
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_limit_.count() > 0) {
      // Oldest idle runtimes sit at the front.
      size_t n = 0;
      while (n < idle_.size() && now - idle_[n].since > idle_limit_) ++n;
      for (size_t i = 0; i < n; ++i) to_free.push_back(std::move(idle_[i].rt));
      idle_.erase(idle_.begin(), idle_.begin() + n);
      stats_.live -= n;
      stats_.freed += n;
    }
    idle_.push_back(Idle{std::move(rt), now, std::this_thread::get_id()});
    stats_.idle = idle_.size();
    wake = waiting_ > 0;
  }
  if (wake) cv_.notify_one();
}

RuntimePoolStats RuntimePool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void RuntimePool::trim() {
  std::vector<Idle> to_free;
  {
    std::lock_guard<std::mutex> lock(mu_);
    to_free.swap(idle_);
    stats_.live -= to_free.size();
    stats_.freed += to_free.size();
    stats_.idle = 0;
  }
  cv_.notify_all();
}

}  // namespace brisk
