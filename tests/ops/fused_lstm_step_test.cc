// ops_cpu.fuse_lstm_cell and ops_cpu::lstm_step (ops_cpu/fused/) on the zoo's LSTM tagger
// in the core ATen IR: the pass fuses every step it can, the graph shrinks, and the
// fused Module's output matches ep.module()'s (the zoo's expected output) and the
// unfused Module's, with the fast kernel, with the small GEMM off, and through the
// dispatcher (fallback_only: the op's CPU implementation). Then ops_cpu.fuse_rnn_layer
// turns the fused steps into layer nodes (aten::lstm.input). The programs of export_lstm_cells.py add a batch past the small
// GEMM, a two-layer bidirectional LSTM returning its final state, state given as inputs
// and returned, and a near miss (i and f swapped) that must stay unfused.
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
constexpr const char* kLayerPass = "ops_cpu.fuse_rnn_layer";
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

// Fused steps that read their row of the input projection in place (x_step >= 0: the
// slice and squeeze before them were absorbed).
size_t absorbedSlices(const Graph& g, const std::string& kind) {
  size_t n = 0;
  for (const Node* node : g.allNodes())
    if (node->kind() == kind && node->inputs().back()->isConstant() && node->inputs().back()->constant().toInt() >= 0)
      ++n;
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

// Runs `m` three times on `inputs_file`; each output must match `expected`, and the
// inputs must stay as they were. Returns the last output.
c10::IValue runChecked(const Module& m, const c10::IValue& expected,
                       const std::string& inputs_file = testing::zooFile("lstm_tagger.inputs.pt")) {
  ModelInputs inputs = loadInputs(inputs_file);
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

// Options that stop at fused steps (ops_cpu.fuse_rnn_layer would turn them into layers).
Options stepsOnly() {
  Options o;
  o.disabled_passes = {kLayerPass};
  return o;
}

TEST(FuseLstmCell, TaggerMatchesExportAndUnfused) {
  const c10::IValue expected = loadPickle(testing::zooFile("lstm_tagger.pt2.expected.pt"));

  Options off;
  // Elementwise fusion off too, so the node counts below compare the steps' own ops.
  off.disabled_passes = {kPass, "ops_cpu.fuse_pointwise"};
  auto unfused = loadTagger(off);
  bool skipped = false;
  EXPECT_EQ(passChanged(*unfused, kPass, &skipped), 0u);
  EXPECT_TRUE(skipped);
  EXPECT_EQ(countKind(unfused->compiled()->graph(), "ops_cpu::lstm_step"), 0u);
  const c10::IValue unfused_out = runChecked(*unfused, expected);

  auto fused = loadTagger(stepsOnly());
  // 2 layers x 2 directions x 20 steps. The first step of each direction has the zero
  // initial state, which the load-time fold multiplied out into a constant: it fuses
  // as a step with a zero state and weight.
  EXPECT_EQ(passChanged(*fused, kPass, &skipped), 80u);
  EXPECT_FALSE(skipped);
  EXPECT_EQ(countKind(fused->compiled()->graph(), "ops_cpu::lstm_step"), 80u);
  // Each fused step replaces at least 13 nodes (add, split, unpack, 4 activations, 3
  // muls, add, tanh; 2 views and the addmm more where not folded) and the slice and
  // squeeze of its row; nothing else reads them, so dead-code elimination removes them.
  EXPECT_LE(fused->compiled()->graph().numNodes() + 80 * 14, unfused->compiled()->graph().numNodes());
  EXPECT_EQ(countKind(fused->compiled()->graph(), "aten::split_with_sizes"), 0u);
  EXPECT_EQ(absorbedSlices(fused->compiled()->graph(), "ops_cpu::lstm_step"), 80u);
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
  Options no_small = stepsOnly();
  no_small.plugin_options["ops_cpu.small_gemm"] = false;
  auto blas = loadTagger(no_small);
  EXPECT_EQ(countKind(blas->compiled()->graph(), "ops_cpu::lstm_step"), 80u);
  runChecked(*blas, expected);

  // Every node through the fallback: the op's dispatcher implementation (the unfused
  // ATen sequence) must serve the fused nodes.
  Options fallback = stepsOnly();
  fallback.fallback_only = true;
  auto via_dispatcher = loadTagger(fallback);
  EXPECT_EQ(countKind(via_dispatcher->compiled()->graph(), "ops_cpu::lstm_step"), 80u);
  for (const NodeKernelInfo& k : via_dispatcher->kernelReport())
    if (k.op == "ops_cpu::lstm_step") {
      EXPECT_EQ(k.kind, KernelKind::kFallback);
    }
  runChecked(*via_dispatcher, expected);
}

// Both passes on (the default): the tagger's two bidirectional layers become two
// aten::lstm.input nodes on brisk's layer kernel; the projections, flips and cats go.
TEST(FuseRnnLayer, TaggerBecomesTwoLayerNodes) {
  const c10::IValue expected = loadPickle(testing::zooFile("lstm_tagger.pt2.expected.pt"));
  auto fused = loadTagger(Options{});
  bool skipped = true;
  EXPECT_EQ(passChanged(*fused, kLayerPass, &skipped), 2u);
  EXPECT_FALSE(skipped);
  const Graph& g = fused->compiled()->graph();
  EXPECT_EQ(countKind(g, "aten::lstm"), 2u);
  EXPECT_EQ(countKind(g, "ops_cpu::lstm_step"), 0u);
  EXPECT_EQ(countKind(g, "aten::flip"), 0u);
  EXPECT_EQ(countKind(g, "aten::cat"), 0u);
  EXPECT_LE(g.numNodes(), 20u);
  size_t layers = 0;
  for (const NodeKernelInfo& k : fused->kernelReport())
    if (k.op == "aten::lstm.input") {
      ++layers;
      EXPECT_EQ(k.kind, KernelKind::kOutVariant);
      EXPECT_EQ(k.detail.rfind("brisk LSTM", 0), 0u) << k.detail;
    }
  EXPECT_EQ(layers, 2u);
  runChecked(*fused, expected);

  // The layer nodes through the dispatcher (ATen's layer) agree too.
  Options fallback;
  fallback.fallback_only = true;
  auto via_dispatcher = loadTagger(fallback);
  EXPECT_EQ(countKind(via_dispatcher->compiled()->graph(), "aten::lstm"), 2u);
  runChecked(*via_dispatcher, expected);
}

std::string program(const std::string& file) { return testing::runfile("tests/ops/" + file); }

// Loads `name` with and without the step fusion; both must match ep.module() and each
// other. The step pass must have fused `steps` steps and the layer pass made `layers`
// layer nodes out of them, leaving `steps_left` steps.
void expectProgram(const std::string& name, size_t steps, size_t layers, size_t steps_left) {
  SCOPED_TRACE(name);
  const c10::IValue expected = loadPickle(program(name + ".expected.pt"));
  const std::string inputs = program(name + ".inputs.pt");
  Options off;
  off.disabled_passes = {kPass};
  auto unfused = Module::load(program(name + ".core.pt2"), off);
  auto fused = Module::load(program(name + ".core.pt2"));
  bool skipped = true;
  EXPECT_EQ(passChanged(*fused, kPass, &skipped), steps);
  EXPECT_EQ(passChanged(*fused, kLayerPass, &skipped), layers);
  EXPECT_EQ(countKind(fused->compiled()->graph(), "ops_cpu::lstm_step"), steps_left);
  EXPECT_EQ(countKind(fused->compiled()->graph(), "aten::lstm"), layers);
  if (steps > 0) {
    EXPECT_LT(fused->compiled()->graph().numNodes(), unfused->compiled()->graph().numNodes());
  } else {
    EXPECT_EQ(fused->compiled()->graph().numNodes(), unfused->compiled()->graph().numNodes());
  }
  EXPECT_EQ(compareIValues(runChecked(*fused, expected, inputs), runChecked(*unfused, expected, inputs), kTol), "");
}

// 10 rows: the recurrent GEMM takes sgemm_ (the small GEMM serves up to 8); all 4 steps
// fuse (the first one folded: zero initial state); the last h and c are outputs. The
// export computes this projection with bmm, not the addmm a layer node is made from.
TEST(FuseLstmCell, BatchPastTheSmallGemm) { expectProgram("lstm_b10", 4, 0, 4); }

// 2 layers x 2 directions x 7 steps at batch 3, no initial state, the last h and c
// returned: two bidirectional layer nodes whose h_n and c_n slices replace the states.
TEST(FuseRnnLayer, TwoLayerBidirectionalWithFinalState) { expectProgram("lstm_bidir2", 28, 2, 0); }

// Initial state as inputs: all 5 steps fuse, the first reading the graph's inputs. The
// export takes each step's row with select.int, not the slice a layer node is made from.
TEST(FuseLstmCell, HandWrittenCellFuses) { expectProgram("cell", 5, 0, 5); }

// The same cell with sigmoid(f) multiplying g and sigmoid(i) multiplying c: not an LSTM
// step in ATen's gate order, so nothing is fused and the result is still right.
TEST(FuseLstmCell, SwappedGatesStayUnfused) { expectProgram("cell_swapped", 0, 0, 0); }

}  // namespace
}  // namespace brisk
