// fork/wait on the inter-op arena: results match the interpreter (zoo inception block,
// nested forks deeper than the arena, futures kept in a list), errors inside a forked
// task reach the caller naming the node, runAsync equals run, and a caller's launcher
// is used for every fork.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/core/ivalue_inl.h>

#include <atomic>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "core/executor/profiler.h"
#include "tests/testing/model_check.h"
#include "threading/inter_op_arena.h"

namespace brisk {
namespace {

using testing::expectMatchesJit;
using testing::runfile;
using testing::zooFile;
using testing::zooModel;

std::string forkModel(const std::string& name) { return runfile("tests/threading/" + name + ".pt"); }
std::string forkInputs(const std::string& name) { return runfile("tests/threading/" + name + ".inputs.pt"); }

Options arenaOf2() {
  Options o;
  o.inter_op_threads = 2;  // process-wide: every test in this binary agrees
  return o;
}

TEST(Fork, ArenaHasTheConfiguredSize) {
  Module::load(zooModel("inception_fork"), arenaOf2());
  EXPECT_EQ(threading::InterOpArena::get().size(), 2);
}

TEST(Fork, InceptionBlockMatchesInterpreter) {
  expectMatchesJit(zooModel("inception_fork"), arenaOf2(),
                   {zooFile("inception_fork.inputs.pt"), zooFile("inception_fork.inputs2.pt")});
}

TEST(Fork, NestedForksDeeperThanTheArenaComplete) {
  // Depth 8 with branching, arena of 2: every worker waits on deeper forks.
  expectMatchesJit(forkModel("nested_fork"), arenaOf2(), {forkInputs("nested_fork")});
}

TEST(Fork, ManyCallersOfNestedForksDoNotDeadlock) {
  auto m = Module::load(forkModel("nested_fork"), arenaOf2());
  ModelInputs in = loadInputs(forkInputs("nested_fork"));
  const at::Tensor expected = m->run(in.args).toTensor();
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i)
        if (!m->run(in.args).toTensor().equal(expected)) ++bad;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(Fork, FuturesInAListMatchInterpreter) {
  expectMatchesJit(forkModel("wide_fork"), arenaOf2(), {forkInputs("wide_fork")});
}

TEST(Fork, ErrorInForkedTaskReachesCallerWithNode) {
  auto m = Module::load(forkModel("throwing_fork"), arenaOf2());
  // Small input: fine, and equal to the interpreter (checked by expectMatchesJit).
  expectMatchesJit(forkModel("throwing_fork"), arenaOf2(), {forkInputs("throwing_fork")});
  try {
    m->run({at::full({3, 5}, 100.0)});
    FAIL() << "expected brisk::Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("forked task refused a large input"), std::string::npos) << what;
    EXPECT_TRUE(e.namesNode()) << what;
    EXPECT_NE(what.find("prim::RaiseException"), std::string::npos) << what;
  }
  // The module (and its children's runtimes) stay usable.
  ModelInputs in = loadInputs(forkInputs("throwing_fork"));
  EXPECT_NO_THROW(m->run(in.args));
}

TEST(Fork, RunAsyncEqualsRun) {
  auto m = Module::load(zooModel("inception_fork"), arenaOf2());
  ModelInputs in = loadInputs(zooFile("inception_fork.inputs.pt"));
  const at::Tensor expected = m->run(in.args).toTensor();
  auto fut = m->runAsync(in.args);
  fut->wait();
  ASSERT_FALSE(fut->hasError());
  EXPECT_TRUE(fut->value().toTensor().equal(expected));
  EXPECT_TRUE(fut->elementType()->isSubtypeOf(*c10::TensorType::get()));
}

TEST(Fork, RunAsyncReportsErrorsThroughTheFuture) {
  auto m = Module::load(forkModel("throwing_fork"), arenaOf2());
  c10::intrusive_ptr<c10::ivalue::Future> fut;
  ASSERT_NO_THROW(fut = m->runAsync({at::full({3, 5}, 100.0)}));
  fut->wait();
  ASSERT_TRUE(fut->hasError());
  EXPECT_NE(fut->tryRetrieveErrorMessage().find("forked task refused"), std::string::npos);
}

TEST(Fork, WaitRunsATaskNoThreadHasStarted) {
  // A launcher that never runs anything: every wait finds its fork unclaimed and runs
  // it on the waiting thread, so the model still completes, with the right result.
  auto m = Module::load(forkModel("nested_fork"), arenaOf2());
  ModelInputs in = loadInputs(forkInputs("nested_fork"));
  const at::Tensor expected = m->run(in.args).toTensor();
  std::vector<Task> parked;
  auto fut = m->runAsync(in.args, {}, [&parked](Task t) { parked.push_back(std::move(t)); });
  ASSERT_FALSE(fut->hasError()) << fut->tryRetrieveErrorMessage();
  EXPECT_TRUE(fut->value().toTensor().equal(expected));
  EXPECT_EQ(parked.size(), 22u);
  for (Task& t : parked) t();  // late starts find their task claimed: no-ops
}

TEST(Fork, CustomLauncherRunsEveryFork) {
  auto m = Module::load(forkModel("nested_fork"), arenaOf2());
  ModelInputs in = loadInputs(forkInputs("nested_fork"));
  const at::Tensor expected = m->run(in.args).toTensor();
  // Inline launcher: forks run sequentially on the caller's thread.
  std::atomic<int> calls{0};
  auto fut = m->runAsync(in.args, {}, [&calls](Task t) {
    ++calls;
    t();
  });
  ASSERT_FALSE(fut->hasError()) << fut->tryRetrieveErrorMessage();
  EXPECT_TRUE(fut->value().toTensor().equal(expected));
  // level8 forks 2 x level7; level7 = 1 + level6; level6 = 1 + level5 + level1 (inline
  // call, one fork); level5 = 1 + level4; level4 = 2 + level3 + level1; level3 = 1 +
  // level2; level2 = 1 + level1; level1 = 1  =>  22 forks per run.
  EXPECT_EQ(calls.load(), 22);
  // A launcher with its own threads.
  calls = 0;
  std::vector<std::thread> threads;
  std::mutex mu;
  auto fut2 = m->runAsync(in.args, {}, [&](Task t) {
    ++calls;
    std::lock_guard<std::mutex> lock(mu);
    threads.emplace_back(std::move(t));
  });
  ASSERT_FALSE(fut2->hasError()) << fut2->tryRetrieveErrorMessage();
  EXPECT_TRUE(fut2->value().toTensor().equal(expected));
  EXPECT_EQ(calls.load(), 22);
  for (auto& t : threads) t.join();
}

TEST(Fork, ProfilerSeesForkTasksOnOtherThreads) {
  auto m = Module::load(zooModel("inception_fork"), arenaOf2());
  ModelInputs in = loadInputs(zooFile("inception_fork.inputs.pt"));
  Profiler prof;
  RunOptions ro;
  ro.profiler = &prof;
  // A launcher that finishes each task on its own thread before returning: the fork
  // surely runs elsewhere (with the arena, the waiting thread may run it itself).
  ro.launcher = [](Task t) { std::thread(std::move(t)).join(); };
  m->run(in.args, {}, ro);
  EXPECT_EQ(prof.runs(), 2u);  // the model and its fork child
  std::set<uint32_t> threads;
  for (const auto& e : prof.events()) threads.insert(e.thread);
  EXPECT_GE(threads.size(), 2u);  // the fork's nodes carry their own thread
  std::ostringstream trace;
  prof.writeChromeTrace(trace);
  EXPECT_NE(trace.str().find("\"traceEvents\""), std::string::npos);
  EXPECT_FALSE(prof.byOp().empty());
}

}  // namespace
}  // namespace brisk
