// The tester itself: a fallback-served op matches, and a wrong expectation fails.
#include <ATen/ATen.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

const char* kIR = R"IR(
graph(%a : Tensor, %b : Tensor):
  %c : Tensor = aten::atan2(%a, %b)
  return (%c)
)IR";

TEST(OpTester, FallbackOpMatches) {
  OpTester(kIR)
      .inputs({at::randn({2, 3}), at::randn({2, 3})})
      .inputs({at::randn({7, 5}), at::randn({7, 5})})
      .expectKernel("aten::atan2", KernelKind::kFallback)
      .run();
}

TEST(OpTester, WrongKindIsReported) {
  EXPECT_NONFATAL_FAILURE(OpTester(kIR)
                              .inputs({at::randn({2}), at::randn({2})})
                              .expectKernel("aten::atan2", KernelKind::kOutVariant)
                              .run(),
                          "atan2");
}

}  // namespace
}  // namespace brisk::testing
