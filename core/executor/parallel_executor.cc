#include "core/executor/parallel_executor.h"

#include <ATen/core/grad_mode.h>

#include "core/common/error.h"
#include "core/plan/execution_plan.h"
#include "core/graph/graph.h"
#include "core/executor/compiled_module.h"
#include "core/plan/parallel_plan.h"
#include "core/executor/profiler.h"
#include "core/executor/runtime.h"
#include "core/executor/step_call.h"

namespace brisk {

ParallelExecutor::ParallelExecutor(Runtime& rt, const ExecBlock& block, int max_workers)
    : rt_(rt),
      block_(block),
      sched_(*block.parallel),
      max_workers_(max_workers),
      pending_(new std::atomic<uint32_t>[block.steps.size()]),
      readers_(new std::atomic<uint32_t>[sched_.counter_init.size()]),
      next_(new int32_t[block.steps.size()]) {}

ParallelExecutor::~ParallelExecutor() = default;

void ParallelExecutor::run(bool profile) {
  profile_ = profile;
  const size_t n = block_.steps.size();
  for (size_t i = 0; i < n; ++i) pending_[i].store(sched_.num_preds[i], std::memory_order_relaxed);
  for (size_t c = 0; c < sched_.counter_init.size(); ++c)
    readers_[c].store(sched_.counter_init[c], std::memory_order_relaxed);
  head_.store(-1, std::memory_order_relaxed);
  failed_.store(false, std::memory_order_relaxed);
  error_ = nullptr;
  error_step_ = nullptr;
  done_.reset();
  workers_.store(1, std::memory_order_release);  // this thread
  // Roots: the first runs here, the others are scheduled like any ready step.
  for (size_t r = 1; r < sched_.roots.size(); ++r) schedule(sched_.roots[r]);
  work(static_cast<int32_t>(sched_.roots[0]));
  done_.wait();
  if (!error_) return;
  try {
    std::rethrow_exception(error_);
  } catch (...) {
    rethrowNamingStep(*error_step_);
  }
}

void ParallelExecutor::runStep(uint32_t i) {
  const Step& step = block_.steps[i];
  c10::IValue* slots = rt_.slots();
  const uint32_t* idx = rt_.module().plan().indices.data();
  if (!failed_.load(std::memory_order_relaxed)) {
    try {
      if (profile_)
        callStep<true>(rt_, slots, idx, step);
      else
        callStep<false>(rt_, slots, idx, step);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu_);
      if (!error_) {
        error_ = std::current_exception();
        error_step_ = &step;
      }
      failed_.store(true, std::memory_order_relaxed);
    }
  }
  // Values whose last reader this was die now (after a failure too: the run is over).
  for (uint32_t r = sched_.rel_begin[i]; r < sched_.rel_begin[i + 1]; ++r) {
    const uint32_t c = sched_.rel[r];
    if (readers_[c].fetch_sub(1, std::memory_order_acq_rel) == 1) slots[sched_.counter_slot[c]] = c10::IValue();
  }
}

void ParallelExecutor::work(int32_t first) {
  drain(first);
  leave();
}

void ParallelExecutor::drain(int32_t cur) {
  for (;;) {
    if (cur < 0) cur = pop();
    if (cur < 0) return;
    runStep(static_cast<uint32_t>(cur));
    int32_t next = -1;
    for (uint32_t s = sched_.succ_begin[cur]; s < sched_.succ_begin[cur + 1]; ++s) {
      const uint32_t j = sched_.succ[s];
      if (pending_[j].fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
      if (next < 0)
        next = static_cast<int32_t>(j);  // continue with it on this thread
      else
        schedule(j);
    }
    cur = next;
  }
}

// Only the last worker to leave re-checks the ready stack (steps are pushed only by
// active workers, so it sees every one of them) and ends the run; a worker that is not
// last touches nothing after its decrement, because the run may end at any moment.
void ParallelExecutor::leave() {
  for (;;) {
    if (workers_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (head_.load(std::memory_order_acquire) < 0) {
      done_.signal();
      return;
    }
    workers_.fetch_add(1, std::memory_order_acq_rel);
    drain(-1);
  }
}

void ParallelExecutor::schedule(uint32_t i) {
  int32_t w = workers_.load(std::memory_order_relaxed);
  while (w < max_workers_) {
    if (workers_.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel)) {
      threading::InterOpArena::get().launch([this, i] {
        // Thread-local state the caller's thread has (Runtime::run turns grad off).
        at::AutoGradMode no_grad(false);
        work(static_cast<int32_t>(i));
      });
      return;
    }
  }
  push(i);
}

void ParallelExecutor::push(uint32_t i) {
  int32_t h = head_.load(std::memory_order_relaxed);
  do {
    next_[i] = h;
  } while (!head_.compare_exchange_weak(h, static_cast<int32_t>(i), std::memory_order_release,
                                        std::memory_order_relaxed));
}

int32_t ParallelExecutor::pop() {
  int32_t h = head_.load(std::memory_order_acquire);
  // No ABA: a step is pushed at most once per run, so a popped index never returns.
  while (h >= 0 && !head_.compare_exchange_weak(h, next_[h], std::memory_order_acq_rel, std::memory_order_acquire)) {
  }
  return h;
}

}  // namespace brisk
