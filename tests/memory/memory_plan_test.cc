// The memory planner's contract on small IR graphs, with out-variant kernels defined
// here (no plugin): managed lifetimes cover views, slabs are reused across runs and
// loop iterations, a tensor that outgrows its plan triggers a re-plan, results handed
// to the caller are never overwritten, a failed run leaves the Runtime usable, and a
// managed tensor that is unexpectedly still referenced is copied out of the slab.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/common/error.h"
#include "core/plan/execution_plan.h"
#include "core/kernels/kernel_registry.h"
#include "core/executor/module.h"
#include "core/kernels/output_capture.h"
#include "core/executor/runtime.h"
#include "planners/registry.h"

namespace brisk {
namespace {

using OutFn = std::function<void(KernelContext&, at::Tensor&)>;
using FreshFn = std::function<at::Tensor(KernelContext&)>;

// An out-variant kernel: writes into the retained output when there is one.
class TestOutKernel final : public Kernel {
 public:
  TestOutKernel(FreshFn fresh, OutFn out) : Kernel(KernelKind::kOutVariant), fresh_(fresh), out_(out) {}
  void run(KernelContext& ctx) const override {
    c10::IValue& o = ctx.output(0);
    if (o.isTensor()) {
      at::Tensor& t = o.toTensor();
      t.unsafeGetTensorImpl()->set_sizes_contiguous({0});
      out_(ctx, t);
    } else {
      o = fresh_(ctx);
    }
  }

 private:
  FreshFn fresh_;
  OutFn out_;
};

// Tensors "leaked" by the aten::neg kernel (simulates an escape analysis cannot see).
std::vector<at::Tensor>& stash() {
  static std::vector<at::Tensor> s;
  return s;
}

// An allocating kernel like conv: its result comes from the allocator inside an
// OutputCapture, and the call makes a temporary first (scratch). With keep_temporary()
// set it keeps that temporary after the call (a kernel caching a buffer).
bool& keepTemporary() {
  static bool keep = false;
  return keep;
}
std::vector<std::pair<at::Tensor, float>>& keptTemporaries() {
  static std::vector<std::pair<at::Tensor, float>> kept;
  return kept;
}

class TestCaptureKernel final : public Kernel {
 public:
  TestCaptureKernel() : Kernel(KernelKind::kOutVariant) {}
  void run(KernelContext& ctx) const override {
    const at::Tensor& x = ctx.tensor(0);
    OutputCapture capture(ctx, 0);
    float shift = 0;
    {
      at::Tensor tmp = at::empty({1024});
      const float mark = x.flatten()[0].item<float>();
      tmp.fill_(mark);
      shift = tmp[7].item<float>() - mark;  // 0: the temporary is really used
      if (keepTemporary()) keptTemporaries().emplace_back(tmp, mark);
    }
    at::Tensor r = at::exp(x) + shift;
    capture.done(r);
    ctx.output(0) = std::move(r);
  }
};

void addOut(Registries& r, const std::string& key, FreshFn fresh, OutFn out) {
  r.out_variant.add(
      key, [fresh, out](KernelBuildContext&) { return std::make_unique<TestOutKernel>(fresh, out); }, "test");
}

Registries& testRegistries() {
  static Registries* r = [] {
    auto* r = new Registries();
    addOut(
        *r, "aten::mul.Tensor", [](KernelContext& c) { return at::mul(c.tensor(0), c.tensor(1)); },
        [](KernelContext& c, at::Tensor& o) { at::mul_out(o, c.tensor(0), c.tensor(1)); });
    addOut(
        *r, "aten::sigmoid", [](KernelContext& c) { return at::sigmoid(c.tensor(0)); },
        [](KernelContext& c, at::Tensor& o) { at::sigmoid_out(o, c.tensor(0)); });
    // Fails on inputs whose first element is > 100 (to test a failed run).
    addOut(
        *r, "aten::tanh",
        [](KernelContext& c) {
          TORCH_CHECK(c.tensor(0).flatten()[0].item<float>() <= 100, "tanh test kernel: input too large");
          return at::tanh(c.tensor(0));
        },
        [](KernelContext& c, at::Tensor& o) {
          TORCH_CHECK(c.tensor(0).flatten()[0].item<float>() <= 100, "tanh test kernel: input too large");
          at::tanh_out(o, c.tensor(0));
        });
    r->out_variant.add(
        "aten::exp", [](KernelBuildContext&) { return std::make_unique<TestCaptureKernel>(); }, "test");
    // Keeps a reference to its output after the run (a bug in a kernel).
    addOut(
        *r, "aten::neg",
        [](KernelContext& c) {
          at::Tensor t = at::neg(c.tensor(0));
          stash().push_back(t);
          return t;
        },
        [](KernelContext& c, at::Tensor& o) {
          at::neg_out(o, c.tensor(0));
          stash().push_back(o);
        });
    return r;
  }();
  return *r;
}

// In-place reuse off: these graphs count managed tensors and lifetimes exactly
// (tests/ops/inplace_reuse_test.cc covers reuse with planning on).
Options planned(const std::string& planner = "greedy_by_size") {
  Options o;
  o.inplace_reuse = false;
  o.plugins.clear();
  o.memory_planning = true;
  o.planner = planner;
  return o;
}

std::shared_ptr<Module> load(const std::string& ir, const Options& o = planned()) {
  return Module::fromIR(ir, o, "memory-test", &testRegistries());
}

// a's only direct reader is the view %v, but %v is read after %b is produced: a and b
// must not share bytes.
const char* kViewExtendsLifetime = R"IR(
graph(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::mul(%x, %x)
  %v : Tensor = aten::t(%a)
  %b : Tensor = aten::mul(%y, %y)
  %s : Tensor = aten::sigmoid(%b)
  %c : Tensor = aten::mul(%v, %s)
  return (%c)
)IR";

at::Tensor viewReference(const at::Tensor& x, const at::Tensor& y) {
  return (x * x).t() * at::sigmoid(y * y);
}

TEST(MemoryPlan, ViewsExtendLifetimes) {
  auto m = load(kViewExtendsLifetime);
  const ExecBlock& top = m->compiled()->plan().blocks.front();
  ASSERT_EQ(top.managed.size(), 3u);  // a, b, s (c is the output)
  EXPECT_EQ(top.managed[0].first, 0u);
  EXPECT_EQ(top.managed[0].last, 4u);  // through the view's use at step 4
  EXPECT_EQ(top.managed[1].first, 2u);
  EXPECT_EQ(top.managed[1].last, 3u);
  auto rt = m->createRuntime();
  for (int run = 0; run < 4; ++run) {
    at::Tensor x = at::randn({3, 5}), y = at::randn({5, 3});
    EXPECT_TRUE(rt->run({x, y}).toTensor().allclose(viewReference(x, y))) << "run " << run;
  }
  MemoryStats s = rt->memoryStats();
  EXPECT_EQ(s.managed_tensors, 3u);
  EXPECT_EQ(s.plans, 1u);
  EXPECT_EQ(s.replans, 0u);
  EXPECT_GE(s.slab_bytes, s.lower_bound);
  EXPECT_GT(s.lower_bound, 0u);
}

TEST(MemoryPlan, EveryPlannerMatchesAndGrowthReplans) {
  for (const std::string& planner : planners::PlannerRegistry::global().names()) {
    SCOPED_TRACE(planner);
    auto m = load(kViewExtendsLifetime, planned(planner));
    auto rt = m->createRuntime();
    for (int64_t n : {4, 4, 16, 16, 4, 32, 4}) {
      at::Tensor x = at::randn({n, n + 1}), y = at::randn({n + 1, n});
      EXPECT_TRUE(rt->run({x, y}).toTensor().allclose(viewReference(x, y))) << "n " << n;
    }
    MemoryStats s = rt->memoryStats();
    EXPECT_EQ(s.replans, 2u);  // 4 -> 16 -> 32
    EXPECT_GE(s.slab_bytes, s.lower_bound);
    EXPECT_GE(s.lower_bound, 3u * 32 * 33 * 4);  // a, b, s at n=32 are live together
  }
}

TEST(MemoryPlan, UnknownPlannerIsAnErrorListingNames) {
  try {
    load(kViewExtendsLifetime, planned("best_guess"));
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("best_guess"), std::string::npos) << msg;
    EXPECT_NE(msg.find("greedy_by_size"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bump"), std::string::npos) << msg;
  }
}

TEST(MemoryPlan, DisabledMeansNoManagedValues) {
  Options o = planned();
  o.memory_planning = false;
  auto m = load(kViewExtendsLifetime, o);
  EXPECT_TRUE(m->compiled()->plan().blocks.front().managed.empty());
  at::Tensor x = at::randn({3, 5}), y = at::randn({5, 3});
  EXPECT_TRUE(m->run({x, y}).toTensor().allclose(viewReference(x, y)));
}

// Intermediates inside a loop body are planned in the body's own slab and reused by
// every iteration; the carried value (a block result) is never managed.
const char* kLoop = R"IR(
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %a : Tensor = aten::mul(%acc, %acc)
      %b : Tensor = aten::sigmoid(%a)
      %c : Tensor = aten::mul(%b, %acc)
      %d : Tensor = aten::sigmoid(%c)
      -> (%true, %d)
  %z : Tensor = aten::mul(%y, %y)
  %out : Tensor = aten::sigmoid(%z)
  return (%out)
)IR";

at::Tensor loopReference(at::Tensor x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x = at::sigmoid(at::sigmoid(x * x) * x);
  return at::sigmoid(x * x);
}

TEST(MemoryPlan, LoopBodiesPlanPerIteration) {
  auto m = load(kLoop);
  size_t managed = 0;
  for (const ExecBlock& b : m->compiled()->plan().blocks) managed += b.managed.size();
  EXPECT_EQ(managed, 4u);  // z; a, b, c in the body
  auto rt = m->createRuntime();
  for (auto [size, n] : std::vector<std::pair<int64_t, int64_t>>{{8, 3}, {8, 5}, {64, 2}, {8, 0}, {8, 7}}) {
    at::Tensor x = at::randn({size});
    EXPECT_TRUE(rt->run({x, n}).toTensor().allclose(loopReference(x, n))) << size << " x " << n;
  }
  MemoryStats s = rt->memoryStats();
  EXPECT_EQ(s.managed_tensors, 4u);
  EXPECT_EQ(s.replans, 2u);  // body and top block, once each for size 64
}

// Outputs returned to the caller stay intact when the Runtime runs again.
TEST(MemoryPlan, ResultsAreNeverOverwritten) {
  auto m = load(kLoop);
  auto rt = m->createRuntime();
  at::Tensor x1 = at::randn({16});
  at::Tensor r1 = rt->run({x1, int64_t{2}}).toTensor();
  at::Tensor c1 = r1.clone();
  for (int i = 0; i < 3; ++i) rt->run({at::randn({16}) * 3, int64_t{3}});
  rt->run({at::randn({128}), int64_t{1}});
  EXPECT_TRUE(at::equal(r1, c1));
}

const char* kFailing = R"IR(
graph(%x : Tensor):
  %a : Tensor = aten::mul(%x, %x)
  %b : Tensor = aten::tanh(%a)
  %c : Tensor = aten::sigmoid(%b)
  %d : Tensor = aten::mul(%c, %a)
  return (%d)
)IR";

TEST(MemoryPlan, FailedRunLeavesRuntimeUsable) {
  auto m = load(kFailing);
  auto rt = m->createRuntime();
  auto ref = [](const at::Tensor& x) { return at::sigmoid(at::tanh(x * x)) * (x * x); };
  at::Tensor x = at::rand({6});
  EXPECT_TRUE(rt->run({x}).toTensor().allclose(ref(x)));
  EXPECT_TRUE(rt->run({x}).toTensor().allclose(ref(x)));
  EXPECT_THROW(rt->run({at::full({6}, 50.0)}), Error);
  x = at::rand({6});
  EXPECT_TRUE(rt->run({x}).toTensor().allclose(ref(x)));
  x = at::rand({60});
  EXPECT_TRUE(rt->run({x}).toTensor().allclose(ref(x)));
}

// The neg kernel keeps its output alive after the block: the planner notices the extra
// reference, copies the tensor out of the slab and stops planning it.
const char* kLeaky = R"IR(
graph(%x : Tensor):
  %a : Tensor = aten::mul(%x, %x)
  %b : Tensor = aten::neg(%a)
  %c : Tensor = aten::sigmoid(%b)
  %d : Tensor = aten::mul(%c, %x)
  return (%d)
)IR";

TEST(MemoryPlan, LeakedManagedTensorIsCopiedOut) {
  auto m = load(kLeaky);
  auto rt = m->createRuntime();
  std::vector<at::Tensor> expected_leaks;
  for (int run = 0; run < 4; ++run) {
    at::Tensor x = at::randn({32});
    EXPECT_TRUE(rt->run({x}).toTensor().allclose(at::sigmoid(-(x * x)) * x));
    expected_leaks.push_back(-(x * x));
  }
  ASSERT_EQ(stash().size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(stash()[i].allclose(expected_leaks[i])) << "leak " << i;
  EXPECT_GE(rt->memoryStats().evictions, 1u);
  stash().clear();
}

constexpr const char* kCapturing = R"IR(
graph(%x : Tensor):
  %a : Tensor = aten::exp(%x)
  %b : Tensor = aten::mul(%a, %x)
  %c : Tensor = aten::exp(%b)
  %d : Tensor = aten::mul(%c, %a)
  return (%d)
)IR";

// Temporaries of capturing kernels come from the slab once planned (scratch live only
// during their step), and results stay right.
TEST(MemoryPlan, CaptureScratchServedFromSlab) {
  auto m = load(kCapturing);
  auto rt = m->createRuntime();
  for (int run = 0; run < 4; ++run) {
    at::Tensor x = at::rand({64}) - 0.5;
    at::Tensor a = at::exp(x);
    EXPECT_TRUE(rt->run({x}).toTensor().allclose(at::exp(a * x) * a)) << "run " << run;
  }
  const MemoryStats s = rt->memoryStats();
  EXPECT_EQ(s.captured_outputs, 2u);
  EXPECT_GE(s.scratch_allocations, 2u);  // the temporary of each call, and exp(x) before the shift
  EXPECT_GE(s.scratch_bytes, 2u * 4096);
  EXPECT_GE(s.slab_bytes, s.lower_bound);
}

// A temporary that outlives its call must never be handed out again: the slab is
// abandoned, capture stops for the block, and the kept buffers keep their values.
TEST(MemoryPlan, KeptScratchIsNeverReused) {
  auto m = load(kCapturing);
  auto rt = m->createRuntime();
  for (int run = 0; run < 3; ++run) rt->run({at::rand({64})});
  keepTemporary() = true;
  for (int run = 0; run < 4; ++run) {
    at::Tensor x = at::rand({64}) + run;
    at::Tensor a = at::exp(x);
    EXPECT_TRUE(rt->run({x}).toTensor().allclose(at::exp(a * x) * a)) << "run " << run;
  }
  keepTemporary() = false;
  ASSERT_FALSE(keptTemporaries().empty());
  for (const auto& [t, mark] : keptTemporaries()) EXPECT_TRUE(t.eq(mark).all().item<bool>());
  keptTemporaries().clear();
  EXPECT_EQ(rt->memoryStats().scratch_allocations, 0u);  // capture is off for the block
}

TEST(MemoryPlan, ModuleStatsReportTheLatestPlan) {
  auto m = load(kViewExtendsLifetime);
  EXPECT_EQ(m->stats().managed_values, 3u);
  EXPECT_EQ(m->stats().memory.slab_bytes, 0u);
  at::Tensor x = at::randn({3, 5}), y = at::randn({5, 3});
  m->run({x, y});
  ModuleStats s = m->stats();
  EXPECT_EQ(s.memory.managed_tensors, 3u);
  EXPECT_GT(s.memory.slab_bytes, 0u);
  EXPECT_EQ(s.memory.plans, 1u);
}

}  // namespace
}  // namespace brisk
