#include "threading/inter_op_arena.h"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task.h>
#include <oneapi/tbb/task_arena.h>

#include <ATen/Parallel.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "threading/thread_settings.h"

namespace brisk::threading {

namespace {
// Set on a thread the first time it runs one of our tasks: it is then a TBB worker, and
// brisk code on it always runs inside a task, where suspending is allowed. (Not reset:
// a suspended task may resume on another worker, so a per-task flag would go stale;
// libtorch here uses OpenMP, not TBB, so TBB workers run only arena tasks.)
thread_local bool t_on_arena = false;

// Set in the child of a fork(). TBB's workers do not survive a fork, and an arena whose
// market still counts them never runs what is queued on it: a child that ran a model
// with forks or the parallel executor in its parent would hang on its first such run.
// The child runs each inter-op task on a thread of its own instead (as the TSan builds
// do), which keeps every wait correct at some cost per task.
std::atomic<bool> g_forked{false};

// libtorch sets up a thread's intra-op state on the first ATen call that asks for it,
// and in a forked child the first such set-up also replaces libtorch's pthreadpool,
// unguarded: two new threads doing it at once can see no pool ("Invalid thread pool!").
// The child's task threads therefore do that set-up one at a time, before their task.
// Leaked and re-made in each child: a mutex held at the fork stays held in the child.
std::mutex* g_child_setup_mu = nullptr;

// Parking TBB's workers across a fork. A worker that ran the last node of a run keeps
// going for a moment after the run has returned to its caller: it destroys the task and
// looks for more work, and that bookkeeping takes locks of TBB and tbbmalloc. A fork in
// that moment copies a held lock into the child, whose first oneDNN call then spins on
// it forever (seen: about one child in 250 forked right after a parallel-executor run).
// Before fork() the calling thread therefore queues one parking task per worker and
// waits until every worker sits in one, i.e. in brisk's code holding nothing; the
// parent's handler lets them go. The wait is bounded: a worker stuck in a task that cannot finish while
// the forking thread waits (one that needs the GIL the forking thread holds, say) must
// not turn the fork into a hang, so after kForkParkTimeout the fork goes ahead as before.
struct ForkGate {
  std::atomic<int> parked{0};
  std::atomic<bool> open{false};
};
std::shared_ptr<ForkGate> g_fork_gate;  // touched only by the forking thread's handlers
constexpr auto kForkParkTimeout = std::chrono::seconds(2);

void onForkPrepare();

void onForkParent() {
  if (std::shared_ptr<ForkGate> gate = std::exchange(g_fork_gate, nullptr)) {
    gate->open.store(true, std::memory_order_release);
    gate->open.notify_all();
  }
}

void onForkChild() {
  g_fork_gate = nullptr;  // its parked workers did not come along
  g_child_setup_mu = new std::mutex;
  g_forked.store(true, std::memory_order_release);
}

void runOnOwnThread(Task task) {
  std::thread([t = std::move(task)] {
    if (g_forked.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> lock(*g_child_setup_mu);
      (void)at::get_num_threads();  // the first call on a thread runs libtorch's set-up
    }
    t();
  }).detach();
}
}  // namespace

struct InterOpArena::Impl {
  // TBB's global worker pool defaults to cores - 1 threads; an arena of n workers needs
  // n (+1 for the calling thread TBB counts in max_allowed_parallelism).
  explicit Impl(int n)
      : workers(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(n) + 1),
        arena(n, /*reserved_for_masters=*/0) {
    arena.initialize();
    ::pthread_atfork(onForkPrepare, onForkParent, onForkChild);  // once: the arena is created once
  }
  tbb::global_control workers;
  tbb::task_arena arena;
};

InterOpArena::InterOpArena(int size) : impl_(std::make_unique<Impl>(size)) {}
InterOpArena::~InterOpArena() = default;

InterOpArena& InterOpArena::get() {
  // Leaked on purpose: worker threads may still be finishing tasks at process exit.
  static InterOpArena* arena = new InterOpArena(lockInterOpThreads());
  return *arena;
}

int InterOpArena::size() const { return impl_->arena.max_concurrency(); }

#ifdef BRISK_TSAN
// ThreadSanitizer builds (--config=tsan) only. TSan can follow neither TBB's hand-over of
// a task to a worker (libtbb is not instrumented) nor the stack switches of resumable
// tasks, so every fork would be reported. These builds give each task its own thread
// (pthread_create is understood by TSan) and wait by blocking: brisk's own
// synchronization (futures, events, the parallel executor's counters, pools) is what
// the sanitizer then checks; the TBB arena path is what the normal test build runs.
void InterOpArena::launch(Task task) { runOnOwnThread(std::move(task)); }
#else
void InterOpArena::launch(Task task) {
  if (g_forked.load(std::memory_order_acquire)) return runOnOwnThread(std::move(task));
  impl_->arena.enqueue([t = std::move(task)] {
    t_on_arena = true;
    t();
  });
}
#endif

namespace {
void onForkPrepare() {
#ifndef BRISK_TSAN  // those builds have no workers: every task has its own thread
  // A child forking again runs its tasks on threads of their own, which finish them.
  if (g_forked.load(std::memory_order_acquire)) return;
  InterOpArena& arena = InterOpArena::get();
  // Workers that can exist: TBB's cap (ours or a lower one set elsewhere) less the
  // slot TBB counts for an external thread, and at most the arena's slots. A fork from
  // a worker itself cannot park that worker.
  const int cap = static_cast<int>(
                      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)) - 1;
  const int workers = std::min(arena.size(), cap) - (t_on_arena ? 1 : 0);
  if (workers <= 0) return;
  auto gate = std::make_shared<ForkGate>();
  for (int i = 0; i < workers; ++i) {
    arena.launch([gate] {
      gate->parked.fetch_add(1, std::memory_order_acq_rel);
      while (!gate->open.load(std::memory_order_acquire)) gate->open.wait(false, std::memory_order_acquire);
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + kForkParkTimeout;
  while (gate->parked.load(std::memory_order_acquire) < workers && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  g_fork_gate = std::move(gate);
#endif
}
}  // namespace

TaskLauncher InterOpArena::launcher() {
  return [this](Task t) { launch(std::move(t)); };
}

bool InterOpArena::onArenaThread() { return t_on_arena; }

// --- waiting ---------------------------------------------------------------------------

namespace {
constexpr int kMaxTaskLocals = 4;
TaskLocalSlot g_task_locals[kMaxTaskLocals];
std::atomic<int> g_num_task_locals{0};
}  // namespace

bool registerTaskLocal(TaskLocalSlot slot) {
  const int i = g_num_task_locals.load();
  if (i >= kMaxTaskLocals) return false;
  g_task_locals[i] = slot;
  g_num_task_locals.store(i + 1);
  return true;
}

struct Event::Impl {
  std::mutex mu;
  std::condition_variable cv;
  bool signaled = false;
  tbb::task::suspend_point suspended = nullptr;  // an arena task waiting for signal()
};

Event::Event() : impl_(std::make_unique<Impl>()) {}
Event::~Event() = default;

void Event::reset() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->signaled = false;
  impl_->suspended = nullptr;
}

void Event::signal() {
  tbb::task::suspend_point sp = nullptr;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->signaled = true;
    sp = impl_->suspended;
    impl_->suspended = nullptr;
    impl_->cv.notify_all();
  }
  if (sp) tbb::task::resume(sp);
}

bool Event::signaled() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->signaled;
}

void Event::wait() {
  Impl& s = *impl_;
  if (!InterOpArena::onArenaThread()) {
    std::unique_lock<std::mutex> lock(s.mu);
    s.cv.wait(lock, [&] { return s.signaled; });
    return;
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.signaled) return;
  }
  void* saved[kMaxTaskLocals];
  const int locals = g_num_task_locals.load();
  for (int i = 0; i < locals; ++i) saved[i] = g_task_locals[i].save_and_clear();
  // The suspend callback runs after this task's stack is parked; if signal() already
  // happened by then, resume at once, else leave the point for signal() to resume.
  tbb::task::suspend([&s](tbb::task::suspend_point sp) {
    bool resume_now;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      resume_now = s.signaled;
      if (!resume_now) s.suspended = sp;
    }
    if (resume_now) tbb::task::resume(sp);
  });
  for (int i = 0; i < locals; ++i) g_task_locals[i].restore(saved[i]);
}

void waitFor(const std::function<void(Task wake)>& subscribe) {
  auto ev = std::make_shared<Event>();
  subscribe([ev] { ev->signal(); });
  ev->wait();
}

}  // namespace brisk::threading
