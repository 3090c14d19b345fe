// GRU and LSTM layers in PT2 archives:
//  * the core ATen IR: ops_cpu.fuse_gru_cell and ops_cpu::gru_step (ops_cpu/fused/) on
//    the zoo's GRU encoder and the programs of export_gru_programs.py: the pass fuses
//    every step it can, the graph shrinks, and the fused Module's output matches
//    ep.module()'s and the unfused Module's, with the fast kernel, with the small GEMM
//    off, and through the dispatcher (fallback_only: the op's CPU implementation); a
//    near miss (r and z swapped) stays unfused;
//  * the aten IR (aten.gru.input / aten.lstm.input kept whole): brisk's own layers
//    (ops_cpu/native/rnn_layers.h) serve the node and match ep.module().
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

constexpr const char* kPass = "ops_cpu.fuse_gru_cell";
constexpr const char* kStep = "ops_cpu::gru_step";
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
c10::IValue runChecked(const Module& m, const c10::IValue& expected, const std::string& inputs_file) {
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

// The kind and detail of the kernels serving `op` in `m`; fails when there is none.
void expectKernels(const Module& m, const std::string& op, KernelKind kind, const std::string& detail_prefix) {
  size_t seen = 0;
  for (const NodeKernelInfo& k : m.kernelReport())
    if (k.op == op) {
      ++seen;
      EXPECT_EQ(k.kind, kind) << op;
      EXPECT_EQ(k.provider, "ops_cpu");
      EXPECT_EQ(k.detail.rfind(detail_prefix, 0), 0u) << k.detail;
    }
  EXPECT_GT(seen, 0u) << op;
}

const std::string kEncoderInputs = "gru_encoder.inputs.pt";

TEST(FuseGruCell, EncoderMatchesExportAndUnfused) {
  const c10::IValue expected = loadPickle(testing::zooFile("gru_encoder.pt2.expected.pt"));
  const std::string path = testing::zooFile("gru_encoder.core.pt2");
  const std::string inputs = testing::zooFile(kEncoderInputs);

  Options off;
  // Elementwise fusion off too, so the node counts below compare the steps' own ops.
  off.disabled_passes = {kPass, "ops_cpu.fuse_pointwise"};
  auto unfused = Module::load(path, off);
  bool skipped = false;
  EXPECT_EQ(passChanged(*unfused, kPass, &skipped), 0u);
  EXPECT_TRUE(skipped);
  EXPECT_EQ(countKind(unfused->compiled()->graph(), kStep), 0u);
  const c10::IValue unfused_out = runChecked(*unfused, expected, inputs);

  Options steps_only;
  steps_only.disabled_passes = {kLayerPass};
  auto fused = Module::load(path, steps_only);
  // 16 steps, the initial state a model input: every step fuses.
  EXPECT_EQ(passChanged(*fused, kPass, &skipped), 16u);
  EXPECT_FALSE(skipped);
  EXPECT_EQ(countKind(fused->compiled()->graph(), kStep), 16u);
  // Each fused step replaces 17 nodes (2 splits, 2 unpacks, 2 views, addmm, 4 adds, 2
  // sigmoids, tanh, 2 muls, sub) by one; nothing else reads them.
  EXPECT_LE(fused->compiled()->graph().numNodes() + 16 * 16, unfused->compiled()->graph().numNodes());
  EXPECT_EQ(countKind(fused->compiled()->graph(), "aten::split_with_sizes"), 0u);
  EXPECT_EQ(absorbedSlices(fused->compiled()->graph(), kStep), 16u);
  expectKernels(*fused, kStep, KernelKind::kOutVariant, "brisk GRU step");
  const c10::IValue fused_out = runChecked(*fused, expected, inputs);
  EXPECT_EQ(compareIValues(fused_out, unfused_out, kTol), "");
}

TEST(FuseGruCell, SmallGemmOffAndDispatcherPathMatch) {
  const c10::IValue expected = loadPickle(testing::zooFile("gru_encoder.pt2.expected.pt"));
  const std::string path = testing::zooFile("gru_encoder.core.pt2");
  const std::string inputs = testing::zooFile(kEncoderInputs);
  Options no_small;
  no_small.disabled_passes = {kLayerPass};
  no_small.plugin_options["ops_cpu.small_gemm"] = false;
  auto blas = Module::load(path, no_small);
  EXPECT_EQ(countKind(blas->compiled()->graph(), kStep), 16u);
  runChecked(*blas, expected, inputs);

  // Every node through the fallback: the op's dispatcher implementation (the unfused
  // ATen sequence) must serve the fused nodes.
  Options fallback;
  fallback.disabled_passes = {kLayerPass};
  fallback.fallback_only = true;
  auto via_dispatcher = Module::load(path, fallback);
  EXPECT_EQ(countKind(via_dispatcher->compiled()->graph(), kStep), 16u);
  for (const NodeKernelInfo& k : via_dispatcher->kernelReport())
    if (k.op == kStep) {
      EXPECT_EQ(k.kind, KernelKind::kFallback);
    }
  runChecked(*via_dispatcher, expected, inputs);
}

// Both passes on (the default): the encoder's 16 steps become one aten::gru.input node
// on brisk's layer kernel, whose h_n replaces the last step's state (an output) and its
// stacking.
TEST(FuseRnnLayer, EncoderBecomesOneLayerNode) {
  const c10::IValue expected = loadPickle(testing::zooFile("gru_encoder.pt2.expected.pt"));
  const std::string path = testing::zooFile("gru_encoder.core.pt2");
  auto fused = Module::load(path);
  bool skipped = true;
  EXPECT_EQ(passChanged(*fused, kLayerPass, &skipped), 1u);
  EXPECT_FALSE(skipped);
  EXPECT_EQ(countKind(fused->compiled()->graph(), "aten::gru"), 1u);
  EXPECT_EQ(countKind(fused->compiled()->graph(), kStep), 0u);
  EXPECT_EQ(countKind(fused->compiled()->graph(), "aten::addmm"), 0u);
  // The export's stacking of the final state, view(cat([squeeze(h_n, [0])], 0)), is h_n.
  EXPECT_EQ(countKind(fused->compiled()->graph(), "aten::cat"), 0u);
  expectKernels(*fused, "aten::gru.input", KernelKind::kOutVariant, "brisk GRU");
  runChecked(*fused, expected, testing::zooFile(kEncoderInputs));

  // The layer node through the dispatcher (ATen's layer) agrees too.
  Options fallback;
  fallback.fallback_only = true;
  auto via_dispatcher = Module::load(path, fallback);
  EXPECT_EQ(countKind(via_dispatcher->compiled()->graph(), "aten::gru"), 1u);
  runChecked(*via_dispatcher, expected, testing::zooFile(kEncoderInputs));
}

std::string program(const std::string& file) { return testing::runfile("tests/ops/" + file); }

// Loads `name`.core.pt2 with and without the step pass; both must match ep.module() and
// each other. The step pass must have fused `steps` steps and the layer pass made
// `layers` layer nodes out of them, leaving `steps_left` steps.
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
  EXPECT_EQ(countKind(fused->compiled()->graph(), kStep), steps_left);
  EXPECT_EQ(countKind(fused->compiled()->graph(), "aten::gru"), layers);
  if (steps > 0) {
    EXPECT_LT(fused->compiled()->graph().numNodes(), unfused->compiled()->graph().numNodes());
  } else {
    EXPECT_EQ(fused->compiled()->graph().numNodes(), unfused->compiled()->graph().numNodes());
  }
  EXPECT_EQ(compareIValues(runChecked(*fused, expected, inputs), runChecked(*unfused, expected, inputs), kTol), "");
}

// 2 layers x 2 directions x 5 steps at batch 3, batch_first, initial state given and
// final state returned. The export projects the first layer's input with bmm (not the
// addmm a layer node is made from); in the second, the forward direction's final state
// is read before the reverse direction's initial state is computed, so no one place
// serves a bidirectional node: the forward direction becomes a layer node, the reverse
// one stays 5 steps.
TEST(FuseGruCell, TwoLayerBidirectionalFuses) { expectProgram("gru_bidir2", 20, 1, 15); }

// A hand-written step loop in nn.GRU's formula: all 5 steps fuse.
// Its gates are [B, 3H], not nn.GRU's [1, B, 3H]: the steps stay steps.
TEST(FuseGruCell, HandWrittenCellFuses) { expectProgram("gru_cell", 5, 0, 5); }

// The same cell with r and z swapped: not a GRU step in PyTorch's gate order, so
// nothing is fused and the result is still right.
TEST(FuseGruCell, SwappedGatesStayUnfused) { expectProgram("gru_cell_swapped", 0, 0, 0); }

// The aten IR keeps aten.gru.input / aten.lstm.input: brisk's own layers serve them.
TEST(BriskRnnPt2, AtenIrLayers) {
  struct Case {
    std::string archive, expected, inputs, op, prefix;
  };
  const Case cases[] = {
      {testing::zooFile("gru_encoder.pt2"), testing::zooFile("gru_encoder.pt2.expected.pt"),
       testing::zooFile(kEncoderInputs), "aten::gru.input", "brisk GRU"},
      {testing::zooFile("lstm_tagger.pt2"), testing::zooFile("lstm_tagger.pt2.expected.pt"),
       testing::zooFile("lstm_tagger.inputs.pt"), "aten::lstm.input", "brisk LSTM"},
      {program("gru_bidir2.pt2"), program("gru_bidir2.expected.pt"), program("gru_bidir2.inputs.pt"),
       "aten::gru.input", "brisk GRU"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.archive);
    auto m = Module::load(c.archive);
    expectKernels(*m, c.op, KernelKind::kOutVariant, c.prefix);
    runChecked(*m, loadPickle(c.expected), c.inputs);
  }
}

}  // namespace
}  // namespace brisk
