// The parallel executor (max_parallel_ops > 1): every zoo model and the two-branch model
// match the interpreter with memory planning on, over 100 repeated runs; the DAG's
// conflict relation keeps tensors of concurrent branches apart even where the serial
// order would let them share bytes.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "core/common/error.h"
#include "core/plan/execution_plan.h"
#include "core/graph/graph.h"
#include "core/executor/module.h"
#include "core/plan/parallel_plan.h"
#include "tests/testing/model_check.h"
#include "tools/ivalue_compare.h"
#include "tools/jit_reference.h"

namespace brisk {
namespace {

using testing::expectMatchesJit;
using testing::runfile;
using testing::zooFile;
using testing::zooModel;

Options parallel(int ops) {
  Options o;
  o.inter_op_threads = 2;
  o.max_parallel_ops = ops;
  return o;
}

const std::vector<std::string> kZoo = {"resnet18",       "mobilenet_v2",     "mlp",          "deepandwide",
                      "transformer",    "inception_fork",   "inception_nofork", "control_flow",
                      "multi_output",   "chain_mul100",     "chain_add100",     "lstm_tagger",
                      "gru_encoder"};

class ParallelZoo : public ::testing::TestWithParam<std::string> {};

TEST_P(ParallelZoo, MatchesInterpreterWithPlanning) {
  const std::string& m = GetParam();
  for (int ops : {2, 4}) {
    SCOPED_TRACE("max_parallel_ops " + std::to_string(ops));
    expectMatchesJit(zooModel(m), parallel(ops),
                     {zooFile(m + ".inputs.pt"), zooFile(m + ".inputs2.pt"), zooFile(m + ".inputs.pt")});
  }
}

TEST_P(ParallelZoo, HundredRunsStayEqual) {
  const std::string& m = GetParam();
  auto module = Module::load(zooModel(m), parallel(2));
  JitReference ref(zooModel(m));
  ModelInputs in = loadInputs(zooFile(m + ".inputs.pt"));
  ModelInputs in2 = loadInputs(zooFile(m + ".inputs2.pt"));
  const c10::IValue expected = ref.run(cloneInputs(in));
  const c10::IValue expected2 = ref.run(cloneInputs(in2));
  int bad = 0;
  for (int i = 0; i < 100 && bad == 0; ++i) {
    const bool second = i % 10 == 9;  // other shapes now and then: re-plans under load
    c10::IValue out = module->run(second ? in2.args : in.args, second ? in2.kwargs : in.kwargs);
    const std::string diff = compareIValues(out, second ? expected2 : expected, Tolerance{});
    if (!diff.empty()) {
      ADD_FAILURE() << "run " << i << ": " << diff;
      ++bad;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, ParallelZoo, ::testing::ValuesIn(kZoo),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(Parallel, TwoBranchesMatchInterpreter) {
  const std::string model = runfile("tests/threading/two_branches.pt");
  for (int ops : {2, 3, 8}) expectMatchesJit(model, parallel(ops), {runfile("tests/threading/two_branches.inputs.pt")});
}

TEST(Parallel, ChainsStaySerial) {
  // No two independent steps: the serial executor is used.
  auto m = Module::load(zooModel("chain_add100"), parallel(2));
  EXPECT_EQ(m->compiled()->plan().blocks.front().parallel, nullptr);
  auto b = Module::load(runfile("tests/threading/two_branches.pt"), parallel(2));
  EXPECT_NE(b->compiled()->plan().blocks.front().parallel, nullptr);
}

TEST(Parallel, ConcurrentBranchesNeverShareBytes) {
  // The planner's relation on brisk's own conv kernels (delegate partitions would hide
  // the branches' intermediate tensors inside their nodes).
  Options o = parallel(2);
  o.use_delegates = false;
  auto m = Module::load(runfile("tests/threading/two_branches.pt"), o);
  const ExecBlock& top = m->compiled()->plan().blocks.front();
  ASSERT_TRUE(top.managed_conflicts);
  ASSERT_GE(top.managed.size(), 4u);
  // Some pair is disjoint in the serial order yet concurrent in the DAG: the serial plan
  // would let it share bytes, the parallel one must not.
  size_t serial_disjoint_but_conflicting = 0, conflicts = 0;
  for (size_t a = 0; a < top.managed.size(); ++a)
    for (size_t b = a + 1; b < top.managed.size(); ++b) {
      const auto& x = top.managed[a];
      const auto& y = top.managed[b];
      const bool overlap = !(x.last < y.first || y.last < x.first);
      const bool c = top.managed_conflicts(a, b);
      EXPECT_EQ(c, top.managed_conflicts(b, a));
      if (overlap) {
        EXPECT_TRUE(c) << "serially overlapping values must conflict";
      }
      conflicts += c;
      if (c && !overlap) ++serial_disjoint_but_conflicting;
    }
  EXPECT_GT(serial_disjoint_but_conflicting, 0u);
  EXPECT_LT(conflicts, top.managed.size() * (top.managed.size() - 1) / 2) << "some reuse must remain";

  // The slab honours the stricter relation: it is at least the serial plan's (without
  // the conv kernels' scratch, which only serial blocks plan).
  ModelInputs in = loadInputs(runfile("tests/threading/two_branches.inputs.pt"));
  Options serial_options = parallel(1);
  serial_options.plan_kernel_scratch = false;
  serial_options.use_delegates = false;
  auto serial = Module::load(runfile("tests/threading/two_branches.pt"), serial_options);
  m->run(in.args);
  serial->run(in.args);
  EXPECT_EQ(m->stats().memory.scratch_bytes, 0u);
  EXPECT_GE(m->stats().memory.slab_bytes, serial->stats().memory.slab_bytes);
  EXPECT_GT(m->stats().memory.managed_tensors, 0u);
}

TEST(Parallel, ErrorsNameTheNode) {
  auto m = Module::load(runfile("tests/threading/two_branches.pt"), parallel(2));
  try {
    m->run({at::randn({1, 16, 20, 20}).to(at::kDouble)});  // wrong dtype for the convs
    FAIL() << "expected brisk::Error";
  } catch (const Error& e) {
    EXPECT_FALSE(std::string(e.what()).empty());
  }
  ModelInputs in = loadInputs(runfile("tests/threading/two_branches.inputs.pt"));
  EXPECT_NO_THROW(m->run(in.args));  // still usable
}

}  // namespace
}  // namespace brisk
