#pragma once
// brisk.Future, what Module.run_async returns: a c10 future of the run's output seen
// from Python. Its own file because waiting is the one call here that blocks: wait()
// releases the GIL while it does, value() never blocks. Needs the GIL.
#include <pybind11/pybind11.h>

#include <ATen/core/ivalue.h>
#include <c10/util/intrusive_ptr.h>

namespace brisk::python {

namespace py = pybind11;

class PyFuture {
 public:
  explicit PyFuture(c10::intrusive_ptr<c10::ivalue::Future> f);
  bool done() const;
  // Blocks (GIL released) until the run finished; its output, or raises its error.
  py::object wait();
  // The output of a finished run (raises brisk.Error for a failed or unfinished one).
  py::object value();

 private:
  c10::intrusive_ptr<c10::ivalue::Future> f_;
};

}  // namespace brisk::python
