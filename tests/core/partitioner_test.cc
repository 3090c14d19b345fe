// The delegate tier: core's checks on a backend's claims (convexity, effects, overlap,
// nested blocks), the wrapping edit, and the fallbacks that keep a model running when a
// backend declines, fails to compile, or cannot serve a call. The backend is
// tests/plugins' "test_chain" (relu/add chains), loaded as a plugin by name from that
// folder of the test's runfiles (Options::plugin_path).
#include <ATen/ATen.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "core/common/error.h"
#include "core/common/options.h"
#include "core/executor/module.h"
#include "core/executor/profiler.h"
#include "core/frontend/torchscript/torchscript.h"
#include "core/graph/graph.h"
#include "core/kernels/delegate.h"
#include "core/kernels/kernel_registry.h"
#include "core/kernels/plugin_loader.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

using testing::errorOf;

// x -> relu -> add(y) -> relu -> mul(y): the first three are one chain.
const char* kChain = R"IR(
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::add(%a, %y, %one)
  %c : Tensor = aten::relu(%b)
  %d : Tensor = aten::mul(%c, %y)
  return (%d)
)IR";

at::Tensor chainReference(const at::Tensor& x, const at::Tensor& y) { return at::relu(at::relu(x) + y) * y; }

// Where the test's plugins are: core looks only where brisk's own plugins are built.
std::vector<std::string> testPluginPath() { return {testing::runfile("tests/plugins")}; }

Options chainOptions() {
  Options o;
  o.plugin_path = testPluginPath();
  o.delegates = {"test_chain"};
  return o;
}

std::pair<int64_t, int64_t> counts() {
  void* h = dlopen(findPlugin("test_chain", testPluginPath()).c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return {-1, -1};
  auto f = reinterpret_cast<void (*)(int64_t*, int64_t*)>(dlsym(h, "brisk_test_chain_counts"));
  int64_t c = -1, r = -1;
  if (f) f(&c, &r);
  dlclose(h);
  return {c, r};
}

size_t delegateNodes(const Module& m, KernelKind kind) {
  size_t n = 0;
  for (const NodeKernelInfo& k : m.kernelReport()) n += k.op == kDelegateKind && k.kind == kind;
  return n;
}

void expectChainRuns(const Module& m) {
  for (int64_t rows : {3, 5, 3}) {  // repeated runs and another shape
    at::Tensor x = at::randn({rows, 4}), y = at::randn({rows, 4});
    at::Tensor x0 = x.clone(), y0 = y.clone();
    at::Tensor out = m.run({x, y}).toTensor();
    EXPECT_TRUE(at::allclose(out, chainReference(x0, y0)));
    EXPECT_TRUE(x.equal(x0) && y.equal(y0)) << "input changed";
  }
}

TEST(Partitioner, WrapsAChainAndRunsIt) {
  auto m = Module::fromIR(kChain, chainOptions(), "chain");
  EXPECT_EQ(delegateNodes(*m, KernelKind::kDelegate), 1u);
  const Node* d = nullptr;
  for (const Node* n : m->compiled()->graph().top()->nodes())
    if (n->kind() == kDelegateKind) d = n;
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->block(0)->nodes().size(), 3u);
  EXPECT_EQ(d->inputs().size(), 2u);   // x, y
  EXPECT_EQ(d->outputs().size(), 1u);  // c, read by mul
  EXPECT_EQ(m->stats().kernels_by_kind[static_cast<int>(KernelKind::kDelegate)], 1u);
  auto [c0, r0] = counts();
  expectChainRuns(*m);
  auto [c1, r1] = counts();
  EXPECT_EQ(c1, c0);       // compiled at load, not per run
  EXPECT_EQ(r1, r0 + 3);   // one call per run
  bool reported = false;
  for (const PassResult& p : m->passReport()) reported = reported || (p.name == "partition_delegates" && p.changed == 1);
  EXPECT_TRUE(reported);
}

TEST(Partitioner, NoDelegatesAndDisabledPass) {
  Options o = chainOptions();
  o.use_delegates = false;
  auto m = Module::fromIR(kChain, o, "chain-off");
  EXPECT_EQ(delegateNodes(*m, KernelKind::kDelegate), 0u);
  expectChainRuns(*m);
  o = chainOptions();
  o.disabled_passes = {"partition_delegates"};
  m = Module::fromIR(kChain, o, "chain-pass-off");
  EXPECT_EQ(delegateNodes(*m, KernelKind::kDelegate), 0u);
}

TEST(Partitioner, DeclineCompileErrorAndDeclinedRunsFallBack) {
  for (const char* opt : {"test_chain.decline", "test_chain.fail_compile"}) {
    Options o = chainOptions();
    o.plugin_options[opt] = true;
    auto m = Module::fromIR(kChain, o, opt);
    EXPECT_EQ(delegateNodes(*m, KernelKind::kDelegate), 0u) << opt;
    EXPECT_EQ(delegateNodes(*m, KernelKind::kNative), 1u) << opt;  // runs its block on brisk's kernels
    expectChainRuns(*m);
  }
  Options o = chainOptions();
  o.plugin_options["test_chain.decline_runs"] = true;
  auto m = Module::fromIR(kChain, o, "declined-runs");
  EXPECT_EQ(delegateNodes(*m, KernelKind::kDelegate), 1u);
  auto [c0, r0] = counts();
  expectChainRuns(*m);
  EXPECT_EQ(counts().second, r0 + 3);  // asked each time, served by the nested block
}

// The profiler (and brisk bench --profile's kernel time) counts a partition as one
// kernel: its nested nodes, when they run because the backend declined the call, are
// part of the partition's time and are not counted again.
TEST(Partitioner, ProfilerCountsAPartitionAsOneKernel) {
  for (bool declined : {false, true}) {
    SCOPED_TRACE(declined ? "declined runs" : "served runs");
    Options o = chainOptions();
    o.plugin_options["test_chain.decline_runs"] = declined;
    auto m = Module::fromIR(kChain, o, "profiled");
    Profiler profiler;
    RunOptions ro;
    ro.profiler = &profiler;
    m->run({at::randn({3, 4}), at::randn({3, 4})}, {}, ro);
    size_t kernels = 0, nested = 0, partitions = 0;
    for (const Profiler::Event& e : profiler.events()) {
      if (!e.node) continue;
      partitions += e.node->kind() == kDelegateKind;
      if (Profiler::isKernelNode(*e.node))
        ++kernels;
      else if (e.node->owningBlock()->owningNode())
        ++nested;
    }
    EXPECT_EQ(partitions, 1u);
    EXPECT_EQ(kernels, 2u);  // the partition and the mul after it
    EXPECT_EQ(nested, declined ? 3u : 0u);
    EXPECT_GT(profiler.kernelMicros(), 0.0);
  }
}

TEST(Partitioner, NodesWithEffectsAreNeverClaimed) {
  // claim_all claims every node of the block as one group; rand has effects.
  const char* ir = R"IR(
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %sizes : int[] = prim::ListConstruct(%one)
  %r : Tensor = aten::rand(%sizes, %none, %none, %none, %none)
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::add(%a, %r, %one)
  return (%b)
)IR";
  Options o = chainOptions();
  o.plugin_options["test_chain.claim_all"] = true;
  auto m = Module::fromIR(ir, o, "effects");
  EXPECT_EQ(delegateNodes(*m, KernelKind::kDelegate), 0u);
  EXPECT_EQ(m->run({at::ones({1})}).toTensor().size(0), 1);
}

// An in-place op has effects, but when all it writes is a value its group made and alone
// reads, nothing outside the group can tell: torch.export's aten IR keeps such relu_ and
// add_ after every convolution of an eager ResNet. Writing anything else keeps the group
// out.
TEST(Partitioner, InPlaceOpsJoinOnlyWhenTheyWriteTheGroupsOwnValue) {
  // relu -> relu_ -> add_ (tests/pt2/export_programs.py, InplaceTail): one partition.
  auto m = Module::load(testing::runfile("tests/pt2/inplace_tail.pt2"), chainOptions());
  ASSERT_EQ(delegateNodes(*m, KernelKind::kDelegate), 1u);
  for (const NodeKernelInfo& k : m->kernelReport())
    if (k.op == kDelegateKind) EXPECT_NE(k.detail.find("3 relu/add nodes"), std::string::npos) << k.detail;
  const at::Tensor x = at::randn({3, 5}), y = at::randn({3, 5}), x0 = x.clone(), y0 = y.clone();
  EXPECT_TRUE(at::equal(m->run({x, y}).toTensor(), at::relu(x) + y));
  EXPECT_TRUE(at::equal(x, x0));
  EXPECT_TRUE(at::equal(y, y0));

  // relu_ on the graph's input (a mutation the caller sees, which TorchScript's clean-up
  // keeps): refused even when claimed with everything else.
  const char* input = R"IR(
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %b : Tensor = aten::relu_(%x)
  %c : Tensor = aten::add(%b, %y, %one)
  return (%c)
)IR";
  Options all = chainOptions();
  all.plugin_options["test_chain.claim_all"] = true;
  EXPECT_EQ(delegateNodes(*Module::fromIR(input, all, "inplace-input"), KernelKind::kDelegate), 0u);

  // The written value also feeds a view inside the group, which the block returns: the
  // caller would see the write through it, so the group is refused.
  const char* viewed = R"IR(
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %a : Tensor = aten::relu(%x)
  %shape : int[] = prim::ListConstruct(%m1)
  %v : Tensor = aten::view(%a, %shape)
  %b : Tensor = aten::relu_(%a)
  %c : Tensor = aten::add(%b, %y, %one)
  return (%c, %v)
)IR";
  auto v = Module::fromIR(viewed, all, "inplace-viewed");
  EXPECT_EQ(delegateNodes(*v, KernelKind::kDelegate), 0u);
}

TEST(Partitioner, ConvexityIsChecked) {
  // a = relu(x); n = neg(a); b = add(a, n): {relu, add} leaves the group through neg
  // and comes back.
  const char* ir = R"IR(
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::relu(%x)
  %n : Tensor = aten::neg(%a)
  %b : Tensor = aten::add(%a, %n, %one)
  %c : Tensor = aten::relu(%b)
  return (%c)
)IR";
  FrontendResult r = parseTorchScriptIR(ir, "convex");
  Block& top = *r.graph->top();
  std::vector<Node*> relu_add, add_relu;
  for (Node* n : top.nodes()) {
    if (n->kind() == "aten::relu" && n->input(0)->name() == "x") relu_add.push_back(n);
    if (n->kind() == "aten::add") relu_add.push_back(n), add_relu.push_back(n);
    if (n->kind() == "aten::relu" && n->input(0)->name() != "x") add_relu.push_back(n);
  }
  ASSERT_EQ(relu_add.size(), 2u);
  EXPECT_NE(top.wrapProblem(relu_add).find("not convex"), std::string::npos);
  EXPECT_THROW(top.wrapNodes(relu_add, kDelegateKind), Error);
  EXPECT_EQ(top.wrapProblem(add_relu), "");
  // A group with the neg in it is convex; wrapping moves nothing it depends on.
  std::vector<Node*> all(top.nodes().begin(), top.nodes().end());
  EXPECT_EQ(top.wrapProblem(all), "");
  // And the chain backend, which claims relu -> add only when relu's result has one
  // reader, leaves this graph alone: the model runs as it is.
  auto m = Module::fromIR(ir, chainOptions(), "convex-model");
  at::Tensor x = at::randn({4});
  EXPECT_TRUE(at::allclose(m->run({x}).toTensor(), at::relu(at::relu(x) - at::relu(x))));
}

// A backend that claims every relu of the graph, wherever it sits: the ones another
// backend already wrapped must be refused as overlap.
class GreedyRelu final : public DelegateBackend {
 public:
  std::vector<std::vector<const Node*>> claim(const Block& block, const DelegateContext&) const override {
    std::vector<std::vector<const Node*>> out;
    for (const Node* n : block.graph()->allNodes())
      if (n->kind() == "aten::relu") out.push_back({n});
    ++claims;
    return out;
  }
  std::unique_ptr<CompiledPartition> compile(const Partition&, const DelegateContext&) const override { return nullptr; }
  mutable int claims = 0;
};

TEST(Partitioner, OverlapBetweenBackendsIsRefused) {
  Registries regs;
  auto greedy = std::make_shared<GreedyRelu>();
  regs.delegates.add("greedy", greedy, "test");
  Options o;
  o.plugin_path = testPluginPath();
  o.delegates = {"test_chain", "greedy"};
  auto m = Module::fromIR(kChain, o, "overlap", &regs);
  EXPECT_GT(greedy->claims, 0);
  size_t partitions = 0;
  for (const Node* n : m->compiled()->graph().allNodes())
    if (n->kind() == kDelegateKind) {
      ++partitions;
      EXPECT_EQ(n->attributes().at(kDelegateBackendAttr).toStringRef(), "test_chain");
    }
  EXPECT_EQ(partitions, 1u);
  expectChainRuns(*m);
}

TEST(Partitioner, NestedBlocksArePartitioned) {
  const char* ir = R"IR(
graph(%x : Tensor, %flag : bool):
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::If(%flag)
    block0():
      %a : Tensor = aten::relu(%x)
      %b : Tensor = aten::add(%a, %x, %one)
      %c : Tensor = aten::neg(%b)
      -> (%c)
    block1():
      %d : Tensor = aten::neg(%x)
      -> (%d)
  return (%r)
)IR";
  auto m = Module::fromIR(ir, chainOptions(), "nested");
  EXPECT_EQ(delegateNodes(*m, KernelKind::kDelegate), 1u);
  at::Tensor x = at::randn({6});
  for (int rep = 0; rep < 2; ++rep) {
    EXPECT_TRUE(at::allclose(m->run({x, true}).toTensor(), -(at::relu(x) + x)));
    EXPECT_TRUE(at::allclose(m->run({x, false}).toTensor(), -x));
  }
}

TEST(Partitioner, ParallelExecutorRunsPartitions) {
  Options o = chainOptions();
  o.max_parallel_ops = 2;
  auto m = Module::fromIR(kChain, o, "parallel");
  EXPECT_EQ(delegateNodes(*m, KernelKind::kDelegate), 1u);
  expectChainRuns(*m);
}

TEST(Partitioner, MissingBackends) {
  Options o;
  o.plugin_path = testPluginPath();
  o.delegates = {"no_such_backend"};
  std::string e = errorOf([&] { Module::fromIR(kChain, o, "missing"); });
  EXPECT_NE(e.find("no_such_backend"), std::string::npos) << e;
  // A backend option of the wrong type is one load error naming it.
  o.delegates = {"test_chain"};
  o.plugin_options["test_chain.decline"] = int64_t{3};
  e = errorOf([&] { Module::fromIR(kChain, o, "bad-option"); });
  EXPECT_NE(e.find("test_chain.decline"), std::string::npos) << e;
  o.plugin_options.clear();
  // A plugin that loads but registers no backend of that name.
  o.delegates = {"test_plugin"};
  e = errorOf([&] { Module::fromIR(kChain, o, "wrong-plugin"); });
  EXPECT_NE(e.find("registers no backend"), std::string::npos) << e;
}

}  // namespace
}  // namespace brisk
