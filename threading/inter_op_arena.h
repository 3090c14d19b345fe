#pragma once
// The process-wide TBB task arena that runs brisk's inter-op work: prim::fork tasks and
// the parallel executor's nodes. Created on first use with ThreadSettings' inter-op
// size (default: the number of cores); all of its slots go to worker threads, because
// callers of Module::run never join it (they only hand it tasks and wait).
//
// Waiting without idling: a thread of the arena that must wait for another task (an
// aten::wait, the parallel executor joining its nodes) suspends its current task
// (oneTBB resumable tasks) and runs other queued arena work until it is resumed, so a
// chain of nested forks deeper than the arena completes instead of deadlocking with
// every worker blocked. Threads outside the arena simply block.
#include <memory>

#include "threading/task_launcher.h"

namespace brisk::threading {

class InterOpArena {
 public:
  // The arena, created on first call (applying ThreadSettings).
  static InterOpArena& get();

  int size() const;
  // Queues `task` on the arena. The task must not throw (wrap it; see fork_kernels.cc).
  void launch(Task task);
  // A launcher that queues on this arena.
  TaskLauncher launcher();
  // True on the arena's own worker threads.
  static bool onArenaThread();

  ~InterOpArena();

 private:
  explicit InterOpArena(int size);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A one-shot event that a thread can wait for without idling the arena: on an arena
// thread wait() suspends the current task (other arena tasks run meanwhile); elsewhere it
// blocks. Reusable after reset(). Cost: one mutex round per wait/signal, never per node.
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void reset();
  void signal();
  bool signaled() const;
  void wait();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Thread-local state that must follow a task, not a thread, across a suspension: a task
// that waits on an arena thread may resume on another worker, and meanwhile its first
// thread runs other tasks. Event::wait saves and clears every registered slot before
// suspending and restores them (on whichever thread resumes the task) after. Register
// at static-initialization time; at most 4 slots per process.
struct TaskLocalSlot {
  void* (*save_and_clear)();
  void (*restore)(void*);
};
bool registerTaskLocal(TaskLocalSlot slot);

// Waits until `subscribe`'s callback fires: `subscribe(wake)` must arrange for `wake()`
// to be called exactly once, possibly immediately or on another thread (e.g. a
// c10::ivalue::Future callback). Non-idle on arena threads, like Event::wait.
void waitFor(const std::function<void(Task wake)>& subscribe);

}  // namespace brisk::threading
