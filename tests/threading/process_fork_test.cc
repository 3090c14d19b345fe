// Process fork() while the inter-op arena's workers are busy: fork waits until every
// worker has left its task (a worker in the middle of one may hold a lock of TBB or
// tbbmalloc, which the child would then wait for forever), a worker that cannot leave
// delays the fork by a bounded time instead of hanging it, and in both cases the child
// runs a model on the parallel executor and the parent's arena keeps working.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "core/executor/module.h"
#include "tests/testing/model_check.h"
#include "threading/inter_op_arena.h"

namespace brisk {
namespace {

using testing::zooFile;
using testing::zooModel;

constexpr int kArena = 2;

Options parallelOptions() {
  Options o;
  o.inter_op_threads = kArena;  // process-wide: every test in this binary agrees
  o.max_parallel_ops = 4;
  return o;
}

// Occupies every worker of the arena with a task that runs until `release` is set (or,
// when `spin_for` is positive, for that long) with `in_task` counting the tasks running.
struct BusyWorkers {
  std::atomic<int> started{0};
  std::atomic<int> in_task{0};
  std::atomic<bool> release{false};

  void start(std::chrono::milliseconds spin_for) {
    for (int i = 0; i < kArena; ++i)
      threading::InterOpArena::get().launch([this, spin_for] {
        in_task.fetch_add(1);
        started.fetch_add(1);
        const auto until = std::chrono::steady_clock::now() + spin_for;
        while (spin_for.count() > 0 ? std::chrono::steady_clock::now() < until : !release.load())
          std::this_thread::yield();
        in_task.fetch_sub(1);
      });
    while (started.load() < kArena) std::this_thread::yield();
  }
};

// In the child: the workers' tasks as the fork copied them, then a parallel run of the
// zoo's inception block compared with the parent's result. Exit code 0 when both hold.
int childChecks(const BusyWorkers& busy, int expected_in_task, Module& m, const ModelInputs& in,
                const at::Tensor& expected) {
  ::alarm(60);  // a hang in the child becomes a failed exit status
  if (busy.in_task.load() != expected_in_task) return 10 + busy.in_task.load();
  return m.run(in.args).toTensor().allclose(expected, 1e-4, 1e-5) ? 0 : 3;
}

int waitExitCode(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

// The zoo's inception block on the parallel executor, and its result before any fork.
class ProcessFork : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef BRISK_TSAN
    GTEST_SKIP() << "ThreadSanitizer builds have no arena workers to park";
#endif
    m = Module::load(zooModel("inception_fork"), parallelOptions());
    in = loadInputs(zooFile("inception_fork.inputs.pt"));
    expected = m->run(in.args).toTensor();
  }
  std::shared_ptr<Module> m;
  ModelInputs in;
  at::Tensor expected;
};

TEST_F(ProcessFork, WaitsUntilEveryWorkerHasLeftItsTask) {
  ASSERT_EQ(threading::InterOpArena::get().size(), kArena);

  BusyWorkers busy;
  busy.start(std::chrono::milliseconds(300));
  ASSERT_GT(busy.in_task.load(), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(childChecks(busy, /*expected_in_task=*/0, *m, in, expected));
  EXPECT_EQ(waitExitCode(pid), 0) << "10 + n: the fork copied n workers inside their tasks";
  EXPECT_TRUE(m->run(in.args).toTensor().allclose(expected, 1e-4, 1e-5));
}

TEST_F(ProcessFork, AWorkerThatCannotLeaveDelaysTheForkBoundedly) {
  // Released only after fork() returns in the parent: parking cannot succeed.
  BusyWorkers busy;
  busy.start(std::chrono::milliseconds(0));
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(childChecks(busy, /*expected_in_task=*/kArena, *m, in, expected));
  const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  busy.release.store(true);
  EXPECT_EQ(waitExitCode(pid), 0);
  EXPECT_LT(waited_s, 10.0) << "fork() waited for workers that could not be parked";
  // The parking tasks left in the queue run and return once the workers are free.
  EXPECT_TRUE(m->run(in.args).toTensor().allclose(expected, 1e-4, 1e-5));
}

}  // namespace
}  // namespace brisk
