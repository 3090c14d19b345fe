#include "core/executor/learned_inputs.h"

namespace brisk {

LearnedInputs::LearnedInputs(const Signature& signature)
    : signature_(signature), specs_(signature.declared()) {}

void LearnedInputs::check(c10::IValue* const* bound) const {
  // Before the first run has learned, only declared specs are checked (the learned ones
  // are still being written).
  signature_.checkTensors(bound, learned() ? specs_ : signature_.declared());
}

void LearnedInputs::learn(const std::vector<TensorSpec>& observed) {
  if (learned()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (learned_.load(std::memory_order_relaxed)) return;
  const std::vector<TensorSpec>& declared = signature_.declared();
  for (size_t i = 0; i < specs_.size() && i < observed.size(); ++i)
    if (!declared[i].known) specs_[i] = observed[i];
  learned_.store(true, std::memory_order_release);
}

}  // namespace brisk
