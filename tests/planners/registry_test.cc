#include "planners/registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

namespace brisk::planners {
namespace {

TEST(Registry, BuiltinsPresent) {
  auto& reg = PlannerRegistry::global();
  EXPECT_EQ(reg.names(), (std::vector<std::string>{"best_of_orders", "bump", "greedy_by_breadth",
                                                   "greedy_by_size", "storage_groups"}));
  for (const auto& name : reg.names()) EXPECT_NE(reg.lookup(name), nullptr) << name;
  EXPECT_EQ(reg.lookup("nope"), nullptr);
  EXPECT_EQ(&PlannerRegistry::global(), &reg);
}

TEST(Registry, AddRejectsDuplicatesAndEmpty) {
  PlannerRegistry reg;
  reg.add("mine", [](const PlanningProblem&) { return LayoutPlan{}; });
  EXPECT_THROW(reg.add("mine", [](const PlanningProblem&) { return LayoutPlan{}; }),
               std::invalid_argument);
  EXPECT_THROW(reg.add("empty", LayoutAlgorithm{}), std::invalid_argument);
  ASSERT_NE(reg.lookup("mine"), nullptr);
  EXPECT_EQ(reg.names(), std::vector<std::string>{"mine"});
}

TEST(Registry, ConcurrentAddAndLookup) {
  PlannerRegistry reg;
  reg.add("base", [](const PlanningProblem&) { return LayoutPlan{{}, 64}; });
  const LayoutAlgorithm* base = reg.lookup("base");
  std::atomic<int> found{0};
  std::thread writer([&] {
    for (int i = 0; i < 500; ++i) {
      reg.add("p" + std::to_string(i), [](const PlanningProblem&) { return LayoutPlan{}; });
    }
  });
  std::thread reader([&] {
    for (int i = 0; i < 500; ++i) {
      if (reg.lookup("p" + std::to_string(i)) != nullptr) ++found;
      EXPECT_EQ(reg.lookup("base"), base);  // pointers stay valid across adds
    }
  });
  writer.join();
  reader.join();
  EXPECT_EQ(reg.names().size(), 501u);
  EXPECT_EQ((*base)(PlanningProblem{}).total_size, 64u);
}

}  // namespace
}  // namespace brisk::planners
