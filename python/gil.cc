#include "python/gil.h"

#include <atomic>
#include <chrono>
#include <thread>

namespace brisk::py_gil {
namespace {

std::atomic<bool> g_exiting{false};
std::atomic<std::thread::id> g_exit_thread{};  // the thread running the exit: never parked
// Threads between asking for the GIL and getting it. The atexit hook waits for these:
// once the interpreter finalizes, each of them would be ended inside that wait.
std::atomic<int> g_waiting{0};

// Whether this thread must stay away from the GIL from now on.
bool mustPark() { return exiting() && std::this_thread::get_id() != g_exit_thread.load(); }

}  // namespace

bool exiting() { return g_exiting.load(std::memory_order_acquire); }

void parkUntilExit() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

void onPythonExit() {
  g_exit_thread.store(std::this_thread::get_id());
  g_exiting.store(true, std::memory_order_release);
  // Let the waiters through while the interpreter still hands out the GIL normally;
  // bounded, so a thread stuck elsewhere cannot hold up the exit.
  Py_BEGIN_ALLOW_THREADS;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (g_waiting.load(std::memory_order_acquire) > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Py_END_ALLOW_THREADS;
}

NoGil::NoGil() : state_(PyEval_SaveThread()) {
  if (mustPark()) parkUntilExit();  // a thread entering brisk while Python exits
}

NoGil::~NoGil() noexcept(false) {
  if (mustPark()) parkUntilExit();
  g_waiting.fetch_add(1, std::memory_order_acq_rel);
  PyEval_RestoreThread(state_);
  g_waiting.fetch_sub(1, std::memory_order_acq_rel);
}

WithGil::WithGil() {
  g_waiting.fetch_add(1, std::memory_order_acq_rel);
  state_ = PyGILState_Ensure();
  g_waiting.fetch_sub(1, std::memory_order_acq_rel);
}

WithGil::~WithGil() { PyGILState_Release(state_); }

}  // namespace brisk::py_gil
