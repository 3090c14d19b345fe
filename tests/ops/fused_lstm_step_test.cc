// ops_cpu.fuse_lstm_cell and ops_cpu::lstm_step (ops_cpu/fused/) on the zoo's LSTM tagger
// in the core ATen IR: the pass fuses every step it can, the graph shrinks, and the
// fused Module's output matches ep.module()'s (the zoo's expected output) and the
// unfused Module's, with the fast kernel, with the small GEMM off, and through the
// dispatcher (fallback_only: the op's CPU implementation).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iterator>

#include "core/common/options.h"
#include "core/executor/module.h"
#include "core/frontend/model_inputs.h"
#include "core/graph/graph.h"
#include "core/graph/graph_pass.h"
#include "tests/testing/model_check.h"
#include "tools/ivalue_compare.h"

namespace brisk {
namespace {

constexpr const char* kPass = "ops_cpu.fuse_lstm_cell";
// ep.module()'s tolerance in the PT2 tests (rtol, atol, atol scaled by max |value|).
const Tolerance kTol{1e-4, 1e-5, 1e-5};

c10::IValue loadPickle(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return torch::jit::pickle_load(bytes);
}

size_t countKind(const Graph& g, const std::string& kind) {
  size_t n = 0;
  for (const Node* node : g.allNodes()) n += node->kind() == kind;
  return n;
}

size_t passChanged(const Module& m, const std::string& name, bool* skipped) {
  for (const PassResult& r : m.passReport())
    if (r.name == name) {
      *skipped = r.skipped;
      return r.changed;
    }
  ADD_FAILURE() << name << " not in the pass report";
  return 0;
}

// Runs `m` three times on the tagger's inputs; each output must match `expected`, and
// the inputs must stay as they were. Returns the last output.
c10::IValue runChecked(const Module& m, const c10::IValue& expected) {
  ModelInputs inputs = loadInputs(testing::zooFile("lstm_tagger.inputs.pt"));
  const ModelInputs copy = cloneInputs(inputs);
  c10::IValue out;
  for (int run = 0; run < 3; ++run) {
    out = m.run(inputs.args, inputs.kwargs);
    EXPECT_EQ(compareIValues(out, expected, kTol), "") << "run " << run;
  }
  EXPECT_EQ(compareIValues(c10::IValue(c10::ivalue::Tuple::create(inputs.args)),
                           c10::IValue(c10::ivalue::Tuple::create(copy.args)), Tolerance{0, 0, 0}),
            "")
      << "the inputs changed";
  return out;
}

std::shared_ptr<Module> loadTagger(Options o) { return Module::load(testing::zooFile("lstm_tagger.core.pt2"), o); }

TEST(FuseLstmCell, TaggerMatchesExportAndUnfused) {
  const c10::IValue expected = loadPickle(testing::zooFile("lstm_tagger.pt2.expected.pt"));

  Options off;
  off.disabled_passes = {kPass};
  auto unfused = loadTagger(off);
  bool skipped = false;
  EXPECT_EQ(passChanged(*unfused, kPass, &skipped), 0u);
  EXPECT_TRUE(skipped);
  EXPECT_EQ(countKind(unfused->graph(), "ops_cpu::lstm_step"), 0u);
  const c10::IValue unfused_out = runChecked(*unfused, expected);

  auto fused = loadTagger(Options{});
  // 2 layers x 2 directions x 20 steps; the first step of each direction is not a
  // match: its h is the zero initial state, so the load-time fold turned its addmm
  // into a constant.
  EXPECT_EQ(passChanged(*fused, kPass, &skipped), 76u);
  EXPECT_FALSE(skipped);
  EXPECT_EQ(countKind(fused->graph(), "ops_cpu::lstm_step"), 76u);
  // Each fused step replaces 15 nodes (2 views, addmm, add, split, unpack, 4
  // activations, 3 muls, add, tanh) by one; nothing else reads them, so dead-code
  // elimination removes them all.
  EXPECT_LE(fused->graph().numNodes() + 76 * 14, unfused->graph().numNodes());
  EXPECT_EQ(countKind(fused->graph(), "aten::split_with_sizes"), 4u);
  for (const NodeKernelInfo& k : fused->kernelReport())
    if (k.op == "ops_cpu::lstm_step") {
      EXPECT_EQ(k.kind, KernelKind::kOutVariant);
      EXPECT_EQ(k.provider, "ops_cpu");
    }
  const c10::IValue fused_out = runChecked(*fused, expected);
  EXPECT_EQ(compareIValues(fused_out, unfused_out, kTol), "");
}

TEST(FuseLstmCell, SmallGemmOffAndDispatcherPathMatch) {
  const c10::IValue expected = loadPickle(testing::zooFile("lstm_tagger.pt2.expected.pt"));
  Options no_small;
  no_small.plugin_options["ops_cpu.small_gemm"] = false;
  auto blas = loadTagger(no_small);
  EXPECT_EQ(countKind(blas->graph(), "ops_cpu::lstm_step"), 76u);
  runChecked(*blas, expected);

  // Every node through the fallback: the op's dispatcher implementation (the unfused
  // ATen sequence) must serve the fused nodes.
  Options fallback;
  fallback.fallback_only = true;
  auto via_dispatcher = loadTagger(fallback);
  EXPECT_EQ(countKind(via_dispatcher->graph(), "ops_cpu::lstm_step"), 76u);
  for (const NodeKernelInfo& k : via_dispatcher->kernelReport())
    if (k.op == "ops_cpu::lstm_step") {
      EXPECT_EQ(k.kind, KernelKind::kFallback);
    }
  runChecked(*via_dispatcher, expected);
}

}  // namespace
}  // namespace brisk
