#pragma once
// OpTester over groups of input sets. A Module learns its inputs' dtypes and ranks from
// its first run (core/graph/signature.h), so input sets of another dtype or rank need
// a Module of their own: each group (one dtype and rank per input, shapes typically
// shrinking, to exercise retained outputs) gets its own OpTester.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace brisk::testing {

using InputSets = std::vector<std::vector<c10::IValue>>;

// `configure` sets the tolerance and the expected kernels of each group's OpTester.
inline void runGroups(const std::string& ir, const std::vector<InputSets>& groups,
                      const std::function<void(OpTester&)>& configure) {
  for (size_t g = 0; g < groups.size(); ++g) {
    SCOPED_TRACE("input group " + std::to_string(g));
    OpTester t(ir);
    for (const auto& in : groups[g]) t.inputs(in);
    configure(t);
    t.run();
  }
}

}  // namespace brisk::testing
