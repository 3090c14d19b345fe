#pragma once
// A model's input signature (forward's arguments without `self`) and the checks that
// bind a call's args/kwargs to it. Every error names the argument.
#include <ATen/core/ivalue.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace brisk {

using Kwargs = std::unordered_map<std::string, c10::IValue>;

struct Argument {
  std::string name;
  c10::TypePtr type;
  std::optional<c10::IValue> default_value;
};

// dtype and rank a tensor argument must have; `known` false = not fixed (yet).
struct TensorSpec {
  bool known = false;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  int64_t rank = -1;
};

class Signature {
 public:
  Signature() = default;
  Signature(std::string model, std::vector<Argument> args);
  // Moves the declaration; learned specs start over (a moved-to Signature is a new
  // model's, before its first run).
  Signature(Signature&& other) noexcept
      : Signature(std::move(other.model_), std::move(other.args_)) {}
  Signature& operator=(Signature&& other) noexcept {
    model_ = std::move(other.model_);
    args_ = std::move(other.args_);
    declared_ = std::move(other.declared_);
    learned_specs_.assign(args_.size(), TensorSpec{});
    learned_.store(false);
    return *this;
  }

  const std::vector<Argument>& args() const { return args_; }
  std::string str() const;

  // Writes the bound arguments, in order, to out[0..args().size()). Moves from `args`.
  // Throws brisk::Error for a wrong count, an unknown/duplicate/missing kwarg, or a
  // value of the wrong type.
  void bind(std::vector<c10::IValue>& args, const Kwargs& kwargs, c10::IValue* const* out) const;

  // Strict dtype/rank checks (Options::strict_inputs): specs come from the model's
  // traced types or are learned from the first successful run.
  void checkTensors(c10::IValue* const* bound) const;
  bool learned() const { return learned_.load(std::memory_order_acquire); }
  // What the bound inputs' tensors are; learn() fixes them (first successful run wins).
  std::vector<TensorSpec> observe(c10::IValue* const* bound) const;
  void learn(const std::vector<TensorSpec>& observed) const;

 private:
  void checkType(size_t i, const c10::IValue& v) const;
  std::string model_;
  std::vector<Argument> args_;
  // Mutable state of an otherwise immutable Module: set once, first writer wins.
  mutable std::mutex learn_mu_;
  mutable std::atomic<bool> learned_{false};
  std::vector<TensorSpec> declared_;         // from traced types; const after construction
  mutable std::vector<TensorSpec> learned_specs_;  // written once, before learned_ is set
};

}  // namespace brisk
