#pragma once
// A Python callable as brisk's TaskLauncher, for Module.run_async(launcher=...). Its own
// file because it is the one place where brisk's worker threads call into Python: the
// rules of python/gil.h for holding, calling and dropping the callable off the Python
// thread live here and nowhere else.
#include <pybind11/pybind11.h>

#include "threading/task_launcher.h"

namespace brisk::python {

namespace py = pybind11;

// Needs the GIL (it takes `fn` over). The launcher may be copied, called and destroyed
// on any thread: it takes the GIL to call `fn` with a callable that runs the task with
// the GIL released, and to drop `fn`. An exception `fn` raises becomes a brisk::Error
// that fails the run (the future's wait() raises it). Once Python is exiting, tasks run
// inline instead.
TaskLauncher toLauncher(py::object fn);

}  // namespace brisk::python
