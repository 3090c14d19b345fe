// Many caller threads on one Module: 8 threads x 200 runs with different inputs, every
// output equal to the serial result; the runtime pool stays bounded, honours its
// maximum (callers wait) and frees idle runtimes.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "core/executor/runtime_pool.h"
#include "tests/testing/model_check.h"
#include "tools/ivalue_compare.h"

namespace brisk {
namespace {

using testing::zooFile;
using testing::zooModel;

// Input set t: the model's example inputs with every floating tensor scaled by (1 + t/8).
ModelInputs variant(const ModelInputs& base, int t) {
  ModelInputs v = cloneInputs(base);
  for (c10::IValue& a : v.args)
    if (a.isTensor() && a.toTensor().is_floating_point()) a = a.toTensor() * (1.0 + t / 8.0);
  return v;
}

void hammer(const std::string& model, Options o, int threads, int runs) {
  o.inter_op_threads = 2;
  auto m = Module::load(zooModel(model), o);
  const ModelInputs base = loadInputs(zooFile(model + ".inputs.pt"));
  std::vector<ModelInputs> inputs;
  std::vector<c10::IValue> expected;
  for (int t = 0; t < threads; ++t) {
    inputs.push_back(variant(base, t));
    expected.push_back(m->run(cloneInputs(inputs.back()).args, inputs.back().kwargs));
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < runs; ++i) {
        // Rotate through the input sets so neighbours in time differ.
        const int k = (t + i) % threads;
        c10::IValue out = m->run(inputs[k].args, inputs[k].kwargs);
        if (!compareIValues(out, expected[k], Tolerance{1e-6, 1e-6}).empty()) ++bad;
      }
    });
  for (auto& th : pool) th.join();
  EXPECT_EQ(bad.load(), 0) << model;
  const RuntimePoolStats s = m->stats().pool;
  EXPECT_LE(s.peak, o.max_runtimes ? o.max_runtimes : static_cast<size_t>(threads));
  EXPECT_GE(s.created, 1u);
  if (o.max_runtimes) EXPECT_LE(s.live, o.max_runtimes);
}

TEST(Concurrency, EightThreadsMlp) { hammer("mlp", Options{}, 8, 200); }
TEST(Concurrency, EightThreadsDeepAndWide) { hammer("deepandwide", Options{}, 8, 200); }
TEST(Concurrency, EightThreadsControlFlow) { hammer("control_flow", Options{}, 8, 200); }
TEST(Concurrency, EightThreadsInceptionFork) { hammer("inception_fork", Options{}, 8, 50); }

TEST(Concurrency, EightThreadsWithParallelExecutor) {
  Options o;
  o.max_parallel_ops = 2;
  hammer("inception_nofork", o, 8, 50);
}

// The onednn backend builds a convolution's primitive on the first call with each input
// shape and keeps 4 shapes (delegates/onednn/shape_cache.h): 8 callers that start
// together on 6 shapes nobody has run yet race to build the same plans and go past the
// kept ones (those build per call). Every output must match brisk's own kernels.
TEST(Concurrency, ConvPartitionsMeetNewShapesTogether) {
  Options o;
  o.inter_op_threads = 2;
  auto m = Module::load(zooModel("inception_nofork"), o);
  Options plain = o;
  plain.use_delegates = false;
  auto reference = Module::load(zooModel("inception_nofork"), plain);
  ASSERT_GT(m->stats().kernels_by_kind[static_cast<size_t>(KernelKind::kDelegate)], 0u);
  std::vector<at::Tensor> inputs;
  std::vector<at::Tensor> expected;
  for (int64_t side : {28, 20, 16, 12, 30, 24}) {
    inputs.push_back(at::randn({1, 64, side, side}));
    expected.push_back(reference->run({inputs.back()}).toTensor());
  }
  constexpr int kThreads = 8, kRuns = 12;
  std::atomic<int> ready{0}, bad{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < kThreads; ++t)
    callers.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      for (int i = 0; i < kRuns; ++i) {
        const size_t k = (t + i) % inputs.size();
        const at::Tensor out = m->run({inputs[k]}).toTensor();
        if (!at::allclose(out, expected[k], 1e-4, 1e-4)) ++bad;
      }
    });
  for (auto& th : callers) th.join();
  EXPECT_EQ(bad.load(), 0);
}

// `threads` callers that start together (none runs before all exist), each calling
// m.run `runs` times.
void runTogether(const Module& m, const ModelInputs& in, int threads, int runs) {
  std::atomic<int> ready{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < threads; ++t)
    callers.emplace_back([&] {
      ++ready;
      while (ready.load() < threads) std::this_thread::yield();
      for (int i = 0; i < runs; ++i) m.run(in.args);
    });
  for (auto& th : callers) th.join();
}

TEST(Concurrency, PoolMaximumMakesCallersWait) {
  Options o;
  o.max_runtimes = 2;
  hammer("mlp", o, 8, 100);
  auto m = Module::load(zooModel("mlp"), o);
  const ModelInputs in = loadInputs(zooFile("mlp.inputs.pt"));
  runTogether(*m, in, 8, 50);
  EXPECT_LE(m->stats().pool.peak, 2u);

  // The wait itself, without depending on timing (mlp runs may never overlap): with both
  // runtimes leased, a third borrower blocks until one is returned.
  std::shared_ptr<const CompiledModule> c = m->compiled();
  RuntimePool pool([&] { return std::make_unique<Runtime>(*c, nullptr); }, 2, 0);
  auto a = std::make_unique<RuntimePool::Lease>(pool.borrow());
  auto b = std::make_unique<RuntimePool::Lease>(pool.borrow());
  std::atomic<bool> got{false};
  std::thread third([&] {
    RuntimePool::Lease c = pool.borrow();
    got = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (pool.stats().waits == 0 && !got.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  EXPECT_FALSE(got.load()) << "a third runtime was handed out beyond the maximum of 2";
  EXPECT_EQ(pool.stats().live, 2u);
  a.reset();  // the third borrower gets this runtime
  third.join();
  EXPECT_TRUE(got.load());
  const RuntimePoolStats s = pool.stats();
  EXPECT_EQ(s.peak, 2u);
  EXPECT_EQ(s.created, 2u);
  EXPECT_EQ(s.waits, 1u);
}

TEST(Concurrency, IdleRuntimesAreFreed) {
  Options o;
  o.runtime_idle_ms = 1;
  auto m = Module::load(zooModel("mlp"), o);
  const ModelInputs in = loadInputs(zooFile("mlp.inputs.pt"));
  // Four callers start together; on a loaded machine their runs of this fast model may
  // still never overlap, leaving one runtime and nothing idle to free, so the burst is
  // repeated (a bounded number of times) until the pool has held two runtimes at once.
  for (int attempt = 0; attempt < 50 && m->stats().pool.peak < 2; ++attempt) runTogether(*m, in, 4, 20);
  ASSERT_GE(m->stats().pool.peak, 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  m->run(in.args);  // returning a lease frees the idle ones
  const RuntimePoolStats s = m->stats().pool;
  EXPECT_GE(s.freed, 1u);
  EXPECT_LT(s.live, s.peak + 1);
}

// A thread gets back the runtime it used last (its caches still hold it), even when
// another thread returned a runtime after it; plain LIFO would swap them.
TEST(Concurrency, PoolGivesEachThreadItsOwnRuntimeBack) {
  std::shared_ptr<const CompiledModule> m = Module::load(zooModel("mlp"))->compiled();
  RuntimePool pool([&] { return std::make_unique<Runtime>(*m, nullptr); }, 0, 0);
  const Runtime* mine = nullptr;
  const Runtime* theirs = nullptr;
  {
    std::mutex mu;
    std::condition_variable cv;
    int stage = 0;  // 1: other thread holds its lease; 2: main returned its lease
    auto a = std::make_unique<RuntimePool::Lease>(pool.borrow());
    mine = &**a;
    std::thread other([&] {
      RuntimePool::Lease b = pool.borrow();
      theirs = &*b;
      std::unique_lock<std::mutex> lock(mu);
      stage = 1;
      cv.notify_all();
      cv.wait(lock, [&] { return stage == 2; });
    });  // b returns last, after the main thread's lease
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return stage == 1; });
      a.reset();
      stage = 2;
      cv.notify_all();
    }
    other.join();
  }
  ASSERT_NE(mine, theirs);
  EXPECT_EQ(&*pool.borrow(), mine);
  const Runtime* again = nullptr;
  std::thread([&] { again = &*pool.borrow(); }).join();
  EXPECT_EQ(again, theirs);
  EXPECT_EQ(pool.stats().created, 2u);
}

}  // namespace
}  // namespace brisk
