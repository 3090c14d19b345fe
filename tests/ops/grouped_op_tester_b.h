#pragma once
// OpTester over input sets of several dtypes / ranks: a Module fixes its inputs' dtypes
// and ranks at its first run (core/graph/signature.h), so run() makes one OpTester (one
// Module) per run of consecutive sets that agree on them. Same fluent API.
#include <string>
#include <utility>
#include <vector>

#include "tests/ops/op_tester.h"

namespace brisk::testing {

class GroupedOpTester {
 public:
  explicit GroupedOpTester(std::string ir) : ir_(std::move(ir)) {}
  GroupedOpTester& inputs(std::vector<c10::IValue> in) {
    sets_.push_back(std::move(in));
    return *this;
  }
  GroupedOpTester& expectKernel(std::string key, KernelKind kind) {
    expected_.emplace_back(std::move(key), kind);
    return *this;
  }
  GroupedOpTester& tolerance(Tolerance tol) {
    tol_ = tol;
    return *this;
  }
  GroupedOpTester& options(Options o) {
    options_ = std::move(o);
    return *this;
  }
  void run() const {
    size_t begin = 0;
    while (begin < sets_.size()) {
      size_t end = begin + 1;
      while (end < sets_.size() && signature(sets_[end]) == signature(sets_[begin])) ++end;
      OpTester t(ir_);
      t.tolerance(tol_).options(options_);
      for (const auto& [key, kind] : expected_) t.expectKernel(key, kind);
      for (size_t i = begin; i < end; ++i) t.inputs(sets_[i]);
      t.run();
      begin = end;
    }
  }

 private:
  static std::vector<std::pair<int, int64_t>> signature(const std::vector<c10::IValue>& set) {
    std::vector<std::pair<int, int64_t>> s;
    for (const c10::IValue& v : set)
      if (v.isTensor()) s.emplace_back(static_cast<int>(v.toTensor().scalar_type()), v.toTensor().dim());
    return s;
  }

  std::string ir_;
  std::vector<std::vector<c10::IValue>> sets_;
  std::vector<std::pair<std::string, KernelKind>> expected_;
  Tolerance tol_{1e-5, 1e-6};
  Options options_;
};

}  // namespace brisk::testing
