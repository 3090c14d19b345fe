#pragma once
// A model's input signature (forward's arguments without `self`) and the checks that
// bind a call's args/kwargs to it. Every error names the argument.
#include <ATen/core/ivalue.h>

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

// The declaration only: immutable once built, so one Signature serves every thread. What
// a model learns from its first run (the dtype and rank of inputs declared without
// them) is the executor's (core/executor/learned_inputs.h), not the IR's.
class Signature {
 public:
  Signature() = default;
  Signature(std::string model, std::vector<Argument> args);

  const std::vector<Argument>& args() const { return args_; }
  std::string str() const;

  // Writes the bound arguments, in order, to out[0..args().size()). Moves from `args`.
  // Throws brisk::Error for a wrong count, an unknown/duplicate/missing kwarg, or a
  // value of the wrong type.
  void bind(std::vector<c10::IValue>& args, const Kwargs& kwargs, c10::IValue* const* out) const;

  // From the model's traced types: dtype and rank of each argument, `known` false where
  // the model does not fix them.
  const std::vector<TensorSpec>& declared() const { return declared_; }
  // Strict dtype/rank checks (Options::strict_inputs) against `specs` (one per argument;
  // an unknown spec checks nothing). Throws brisk::Error naming the argument.
  void checkTensors(c10::IValue* const* bound, const std::vector<TensorSpec>& specs) const;
  // What the bound inputs' tensors are (unknown for arguments not typed as a tensor).
  std::vector<TensorSpec> observe(c10::IValue* const* bound) const;

 private:
  void checkType(size_t i, const c10::IValue& v) const;
  std::string model_;
  std::vector<Argument> args_;
  std::vector<TensorSpec> declared_;
};

}  // namespace brisk
