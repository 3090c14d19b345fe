#pragma once
// Taking the GIL back while Python is exiting. Once the interpreter finalizes, a thread
// that waits for the GIL is ended on the spot with pthread_exit. On a daemon thread that
// was running a model, that exit unwinds through pybind11's frames: a noexcept
// destructor (std::terminate: "terminate called without an active exception") or a
// py::object released without the GIL (pybind11 aborts). On brisk's own worker threads
// (a Python task launcher) it would end a thread of the inter-op arena.
//
// So brisk keeps its threads out of that wait. An atexit hook (registered at import;
// it runs before the interpreter starts finalizing) marks the exit and lets every thread
// already waiting for the GIL get it; each then lets it go again and parks, rather than
// go back to Python code that may be finalized under it (torch frees a tensor with the
// GIL released, and a thread ended there aborts the process). From then on a thread
// coming back from a run parks until the process ends instead of asking for the GIL, a
// thread entering brisk parks too, and a launcher runs its task without Python. The
// thread running the exit itself (later atexit handlers may still call a model) is never
// parked.
#include <Python.h>

namespace brisk::py_gil {

// True once Python's exit has begun (the atexit hook ran).
bool exiting();
// The process is about to end; this thread must not touch Python again.
[[noreturn]] void parkUntilExit();
// The atexit hook.
void onPythonExit();

// Releases the GIL for its scope (pybind11::gil_scoped_release's job) and takes it back
// only while Python is not exiting.
class NoGil {
 public:
  NoGil();
  ~NoGil() noexcept(false);  // a forced unwind (pthread_exit) must be able to pass
  NoGil(const NoGil&) = delete;
  NoGil& operator=(const NoGil&) = delete;

 private:
  PyThreadState* state_;
};

// Takes the GIL on a thread that may not hold a Python thread state (brisk's workers);
// check exiting() first: see above.
class WithGil {
 public:
  WithGil();
  ~WithGil();
  WithGil(const WithGil&) = delete;
  WithGil& operator=(const WithGil&) = delete;

 private:
  PyGILState_STATE state_;
};

}  // namespace brisk::py_gil
