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
// A thread counts itself in *before* it checks for the exit, and the hook marks the exit
// before it reads the count (both sequentially consistent): so either the thread sees
// the exit and parks, or the hook sees the thread and waits for it. Checking first and
// counting after left a window in which a thread did neither and was ended by
// pthread_exit inside the wait (CI: "terminate called without an active exception").
std::atomic<int> g_waiting{0};

// Whether this thread must stay away from the GIL from now on.
bool mustPark() { return exiting() && std::this_thread::get_id() != g_exit_thread.load(); }

// Counts this thread in as a GIL waiter, unless Python is exiting: then it parks.
void enterWait() {
  g_waiting.fetch_add(1);
  if (!mustPark()) return;
  g_waiting.fetch_sub(1);
  parkUntilExit();
}

}  // namespace

bool exiting() { return g_exiting.load(); }

void parkUntilExit() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

void onPythonExit() {
  g_exit_thread.store(std::this_thread::get_id());
  g_exiting.store(true);
  // Let the waiters through while the interpreter still hands out the GIL normally;
  // bounded, so a thread stuck elsewhere cannot hold up the exit.
  Py_BEGIN_ALLOW_THREADS;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (g_waiting.load() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Py_END_ALLOW_THREADS;
}

NoGil::NoGil() : state_(PyEval_SaveThread()) {
  if (mustPark()) parkUntilExit();  // a thread entering brisk while Python exits
}

NoGil::~NoGil() noexcept(false) {
  enterWait();
  PyEval_RestoreThread(state_);
  g_waiting.fetch_sub(1);
  // Let through by the exit hook: do not go back to Python, which is about to finalize.
  // Code there that releases the GIL (torch frees a tensor without it) would be ended
  // inside C++ frames that cannot unwind.
  if (mustPark()) {
    PyEval_SaveThread();
    parkUntilExit();
  }
}

WithGil::WithGil() {
  enterWait();
  state_ = PyGILState_Ensure();
  g_waiting.fetch_sub(1);
  if (mustPark()) {  // as in ~NoGil
    PyGILState_Release(state_);
    parkUntilExit();
  }
}

WithGil::~WithGil() { PyGILState_Release(state_); }

}  // namespace brisk::py_gil
