#pragma once
// The strict input checks' specs (Options::strict_inputs): the signature's declared dtype
// and rank where the model fixes them, and for the other tensor inputs what the first
// successful run passed. The only state a compiled model learns at run time; it lives
// here, beside the Runtimes that learn it, so the graph layer's Signature stays a
// declaration.
#include <ATen/core/ivalue.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "core/graph/signature.h"

namespace brisk {

class LearnedInputs {
 public:
  explicit LearnedInputs(const Signature& signature);

  // Throws brisk::Error when a bound tensor's dtype or rank differs from its spec.
  void check(c10::IValue* const* bound) const;
  // True once a run has fixed the specs: later runs need not observe.
  bool learned() const { return learned_.load(std::memory_order_acquire); }
  // Fixes the undeclared specs from a successful run's `observed` inputs (first run
  // wins; later calls do nothing). Thread-safe.
  void learn(const std::vector<TensorSpec>& observed);

 private:
  const Signature& signature_;
  std::mutex mu_;  // taken by learn() until the first run has learned, never afterwards
  std::atomic<bool> learned_{false};
  std::vector<TensorSpec> specs_;  // declared, then learned: written once, before learned_ is set
};

}  // namespace brisk
