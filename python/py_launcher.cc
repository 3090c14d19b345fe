#include "python/py_launcher.h"

#include <memory>
#include <string>
#include <utility>

#include "core/common/error.h"
#include "python/gil.h"

namespace brisk::python {

// The callable is kept in a shared_ptr whose deleter takes the GIL: the launcher may be
// copied and destroyed on brisk's threads.
TaskLauncher toLauncher(py::object fn) {
  std::shared_ptr<py::object> holder(new py::object(std::move(fn)), [](py::object* o) {
    if (py_gil::exiting()) return;  // left to the exiting process (python/gil.h)
    py_gil::WithGil gil;
    delete o;
  });
  return [holder](Task task) {
    if (py_gil::exiting()) return task();  // no Python left to launch it
    py_gil::WithGil gil;
    auto shared_task = std::make_shared<Task>(std::move(task));
    py::cpp_function run([shared_task] {
      py_gil::NoGil nogil;
      (*shared_task)();
    });
    try {
      (*holder)(run);
    } catch (py::error_already_set& e) {
      // The run fails with the launcher's error, naming the prim::fork node that called
      // it (the future's wait() raises it). A task the launcher did start still finishes
      // on its own; one it did not is dropped with the run's other fork claims.
      const std::string what = std::string(py::str(e.type().attr("__name__"))) + ": " + std::string(py::str(e.value()));
      throw Error("the run_async launcher raised " + what);
    }
  };
}

}  // namespace brisk::python
