#include "tools/jit_reference.h"

#include <ATen/core/grad_mode.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/serialization/import.h>

#include "core/common/error.h"

namespace brisk {

struct JitReference::Impl {
  torch::jit::Module module;
};

JitReference::JitReference(const std::string& path, bool optimize_numerics) : impl_(new Impl) {
  try {
    torch::jit::Module m = torch::jit::load(path);
    m.eval();
    impl_->module = torch::jit::freeze(m, c10::nullopt, optimize_numerics);
  } catch (const std::exception& e) {
    throw Error(Error::Where{path, "", ""}, "reference interpreter cannot load it: " + describeException(e));
  }
}

JitReference::~JitReference() = default;

c10::IValue JitReference::run(const ModelInputs& inputs) const {
  at::AutoGradMode no_grad(false);
  std::vector<c10::IValue> args = inputs.args;
  return impl_->module.get_method("forward")(std::move(args), inputs.kwargs);
}

}  // namespace brisk
