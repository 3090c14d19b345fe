#pragma once
// One call into a region AOTInductor compiled (core/graph/call_delegate.h), run
// through AOTInductor's model container over brisk's weights.
//
// Threads: one container per Runtime (the first made at compile, the others by each
// Runtime's first call, newState): a container runs one call at a time, and brisk's
// Runtimes run at once. Each container
// takes brisk's weight tensors as its constants (AOTInductor's external constants), so
// the weights are held once however many Runtimes there are. A constant the program's
// weights do not have (one AOTInductor made while compiling) comes from the library,
// loaded once and shared by every container.
#include <memory>
#include <mutex>
#include <unordered_map>
#include <string>
#include <vector>

#include "core/kernels/delegate.h"

namespace brisk::aoti {

class Artifact;
class Container;

class CompiledRegion final : public CompiledPartition {
 public:
  // Throws brisk::Error (no model: core adds it) when the library does not load or
  // does not match the call: its inputs, outputs or constants.
  CompiledRegion(const Partition& p, std::shared_ptr<const Artifact> artifact);
  ~CompiledRegion() override;

  bool run(KernelContext& ctx, DelegateState* state) const override;
  std::unique_ptr<DelegateState> newState() const override;
  std::string describe() const override;

 private:
  struct Operand {
    int input = -1;       // the partition input it is, or -1 for a constant
    at::Tensor constant;  // when input < 0
    c10::ScalarType dtype;
    std::vector<int64_t> sizes;  // -1: any
  };
  std::unique_ptr<Container> makeContainer() const;
  void checkOperand(size_t i, const at::Tensor& t) const;

  std::shared_ptr<const Artifact> artifact_;
  std::vector<Operand> operands_;
  size_t outputs_ = 0;
  // The library's constant names -> the tensors every container runs with.
  std::unordered_map<std::string, at::Tensor> constants_;
  size_t from_weights_ = 0;    // of constants_, those that are brisk's weight tensors
  bool shares_weights_ = false;  // a container was seen to read them in place
  std::shared_ptr<Container> embedded_;  // owns the constants taken from the library
  mutable std::mutex spare_mu_;
  mutable std::unique_ptr<Container> spare_;  // made at compile, taken by the first Runtime
};

}  // namespace brisk::aoti
