#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <tbb/task_arena.h>
#include <glog/logging.h>
#include <absl/strings/str_cat.h>
TEST(Smoke, Works) { auto t = at::ones({2,2}); EXPECT_EQ(t.sum().item<float>(), 4.f); tbb::task_arena a(2); EXPECT_EQ(absl::StrCat("a", 1), "a1"); }
