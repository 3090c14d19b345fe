#pragma once
// The reference brisk is judged against: the TorchScript interpreter running the same
// frozen module (torch.jit.freeze with the same numerics options), under no-grad.
// Used by `brisk bench`/`brisk run --check` and by every model test.
#include <memory>
#include <string>

#include "core/frontend/model_inputs.h"

namespace brisk {

class JitReference {
 public:
  // Throws brisk::Error like Module::load.
  JitReference(const std::string& path, bool optimize_numerics = true);
  ~JitReference();
  c10::IValue run(const ModelInputs& inputs) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace brisk
