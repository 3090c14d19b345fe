#pragma once
// OpTester over groups of input sets: one dtype and rank per input within a group,
// shapes typically shrinking to exercise retained outputs. OpTester itself gives each
// group its own Module (a Module fixes its inputs' dtypes and ranks at its first run).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace brisk::testing {

using InputSets = std::vector<std::vector<c10::IValue>>;

// `configure` sets the tolerance and the expected kernels.
inline void runGroups(const std::string& ir, const std::vector<InputSets>& groups,
                      const std::function<void(OpTester&)>& configure) {
  OpTester t(ir);
  for (const InputSets& group : groups)
    for (const auto& in : group) t.inputs(in);
  configure(t);
  t.run();
}

}  // namespace brisk::testing
