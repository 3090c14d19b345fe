// Thread settings apply once per process; a Module asking for different ones fails to
// load with a clear error, one asking for the same (or none) loads.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "tests/testing/model_check.h"
#include "threading/inter_op_arena.h"
#include "threading/thread_settings.h"

namespace brisk {
namespace {

using testing::zooModel;

TEST(ThreadSettings, AppliedOnceAndConflictsAreErrors) {
  Options o;
  o.intra_op_threads = 1;
  o.inter_op_threads = 3;
  auto m = Module::load(zooModel("mlp"), o);
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_EQ(threading::InterOpArena::get().size(), 3);

  // Same values, or no preference: fine.
  EXPECT_NO_THROW(Module::load(zooModel("mlp"), o));
  EXPECT_NO_THROW(Module::load(zooModel("mlp"), Options{}));

  Options other = o;
  other.intra_op_threads = 2;
  try {
    Module::load(zooModel("mlp"), other);
    FAIL() << "expected brisk::Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("intra-op threads were already set to 1"), std::string::npos) << what;
    EXPECT_NE(what.find("mlp"), std::string::npos) << what;
  }
  other = o;
  other.inter_op_threads = 2;
  EXPECT_THROW(Module::load(zooModel("mlp"), other), Error);
  EXPECT_EQ(threading::currentThreadSettings().inter_op, 3);
}

TEST(ThreadSettings, RejectsNonPositiveParallelism) {
  Options o;
  o.max_parallel_ops = 0;
  EXPECT_THROW(Module::load(zooModel("mlp"), o), Error);
}

}  // namespace
}  // namespace brisk
