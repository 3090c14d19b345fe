#include "delegates/onednn/mkldnn_ops.h"

#include <stdexcept>

namespace brisk::onednn {

c10::OperatorHandle mkldnnOp(const char* name, const char* overload) {
  auto op = c10::Dispatcher::singleton().findSchema({name, overload});
  if (!op)
    throw std::runtime_error(std::string("this libtorch has no ") + name + (*overload ? "." : "") + overload +
                             " (torch built without oneDNN?)");
  return *op;
}

c10::IValue unaryScalars(const std::vector<double>& scalars) {
  c10::List<std::optional<at::Scalar>> list;
  for (double s : scalars) list.push_back(at::Scalar(s));
  return c10::IValue(list);
}

c10::IValue optionalString(const std::optional<std::string>& s) {
  return s ? c10::IValue(*s) : c10::IValue();
}

}  // namespace brisk::onednn
