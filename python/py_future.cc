#include "python/py_future.h"

#include <exception>
#include <utility>

#include "core/common/error.h"
#include "python/gil.h"
#include "python/py_convert.h"

namespace brisk::python {

PyFuture::PyFuture(c10::intrusive_ptr<c10::ivalue::Future> f) : f_(std::move(f)) {}

bool PyFuture::done() const { return f_->completed(); }

py::object PyFuture::wait() {
  {
    py_gil::NoGil nogil;
    f_->wait();
  }
  return value();
}

py::object PyFuture::value() {
  if (!f_->completed()) throw Error("run_async: the future is not complete yet (call wait())");
  if (f_->hasError()) std::rethrow_exception(f_->exception_ptr());
  return toPython(f_->constValue());
}

}  // namespace brisk::python
