#include "core/runtime_pool.h"

#include "core/runtime.h"

namespace brisk {

RuntimePool::RuntimePool(Factory factory, size_t max_runtimes, int64_t idle_ms)
    : factory_(std::move(factory)), max_(max_runtimes), idle_limit_(idle_ms) {}

RuntimePool::~RuntimePool() = default;

RuntimePool::Lease::~Lease() {
  if (rt_) pool_->giveBack(std::move(rt_));
}

RuntimePool::Lease RuntimePool::borrow() {
  std::unique_lock<std::mutex> lock(mu_);
  if (idle_.empty() && max_ != 0 && stats_.live >= max_) {
    ++stats_.waits;
    cv_.wait(lock, [&] { return !idle_.empty() || stats_.live < max_; });
  }
  if (!idle_.empty()) {
    // LIFO: the most recently used runtime has the warmest memory.
    auto rt = std::move(idle_.back().first);
    idle_.pop_back();
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
    cv_.notify_one();
    throw;
  }
}

void RuntimePool::giveBack(std::unique_ptr<Runtime> rt) {
  std::vector<std::unique_ptr<Runtime>> to_free;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = Clock::now();
    if (idle_limit_.count() > 0) {
      // Oldest idle runtimes sit at the front.
      size_t n = 0;
      while (n < idle_.size() && now - idle_[n].second > idle_limit_) ++n;
      for (size_t i = 0; i < n; ++i) to_free.push_back(std::move(idle_[i].first));
      idle_.erase(idle_.begin(), idle_.begin() + n);
      stats_.live -= n;
      stats_.freed += n;
    }
    idle_.emplace_back(std::move(rt), now);
    stats_.idle = idle_.size();
  }
  cv_.notify_one();
}

RuntimePoolStats RuntimePool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void RuntimePool::trim() {
  std::vector<std::pair<std::unique_ptr<Runtime>, Clock::time_point>> to_free;
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
