// ops_cpu's lstm / gru kernels against the interpreter.
//
// brisk's own layers (ops_cpu/native/rnn_layers.h: out-variant kernels for frozen
// weights): LSTM and GRU, 1-2 layers, one or two directions, batch_first or not, with
// and without biases, given or zero initial state, sequence length 1 and longer, batch
// 1 to several, hidden sizes with and without a vector tail, the BLAS path (small GEMM
// off), and inputs the loop leaves to ATen (non-contiguous). They round differently
// from ATen (GEMM order, exp/tanh polynomials), so they are compared to fp32 tolerance.
//
// ATen's kernels (ops_cpu/native/rnn.cc, native: the same at::lstm / at::gru call as the
// interpreter's operator, so exact): both overloads (.input, packed .data), proj_size,
// weights read per run, frozen weights with the out-variant registry off, and train=true
// refused at load.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "tests/ops/op_tester.h"
#include "tests/ops/rnn_ir.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kNative = KernelKind::kNative;
constexpr KernelKind kOutVariant = KernelKind::kOutVariant;
const Tolerance kExact{0, 0, 0};
// brisk's layers against ATen's: relative 1e-4 (a few ulp per exp/tanh and another
// GEMM order, carried through the recurrence), absolute 1e-5 of the largest output.
const Tolerance kRnnTol{1e-4, 1e-6, 1e-5};

// ATen's kernels only: the out-variant registry (brisk's layers) off.
Options atenKernels() {
  Options o;
  o.use_out_variants = false;
  return o;
}

// brisk's layer for `s` against the interpreter on sequences of 7, 1, 3 (zero state)
// and 12 steps at batch 2, 1, 5 and 3.
void expectBriskLayer(const RnnShape& s, bool batch_first, const Options& o = {}) {
  const bool lstm = s.gates == 4;
  const std::string ir = lstm ? lstmIR(s, batch_first) : gruIR(s, batch_first);
  const std::string op = lstm ? "aten::lstm.input" : "aten::gru.input";
  OpTester(ir)
      .inputs(rnnInputs(s, batch_first, 7, 2))
      .inputs(rnnInputs(s, batch_first, 1, 1))
      .inputs(rnnInputs(s, batch_first, 3, 5, /*zero_state=*/true))
      .inputs(rnnInputs(s, batch_first, 12, 3))
      .tolerance(kRnnTol)
      .options(o)
      .expectKernel(op, kOutVariant)
      .run();
  const std::string detail = kernelDetail(*Module::fromIR(ir, o), op);
  EXPECT_EQ(detail.rfind(lstm ? "brisk LSTM" : "brisk GRU", 0), 0u) << detail;
}

// Hidden 11: one vector of 8 and a scalar tail in the gate loops; 16: vectors only.
TEST(BriskRnn, LstmLayersDirectionsAndLayouts) {
  for (int64_t hidden : {11, 16})
    for (int64_t layers : {1, 2})
      for (bool bidir : {false, true})
        for (bool batch_first : {false, true}) {
          SCOPED_TRACE("hidden " + std::to_string(hidden) + " layers " + std::to_string(layers) +
                       (bidir ? " bidirectional" : "") + (batch_first ? " batch_first" : ""));
          expectBriskLayer(RnnShape{4, 5, hidden, layers, bidir, true}, batch_first);
        }
}

TEST(BriskRnn, GruLayersDirectionsAndLayouts) {
  for (int64_t hidden : {11, 16})
    for (int64_t layers : {1, 2})
      for (bool bidir : {false, true})
        for (bool batch_first : {false, true}) {
          SCOPED_TRACE("hidden " + std::to_string(hidden) + " layers " + std::to_string(layers) +
                       (bidir ? " bidirectional" : "") + (batch_first ? " batch_first" : ""));
          expectBriskLayer(RnnShape{3, 5, hidden, layers, bidir, true}, batch_first);
        }
}

TEST(BriskRnn, WithoutBiases) {
  expectBriskLayer(RnnShape{4, 3, 9, 2, true, false}, false);
  expectBriskLayer(RnnShape{3, 3, 9, 2, true, false}, true);
}

// The small GEMM off: every GEMM is the BLAS call.
TEST(BriskRnn, BlasPath) {
  Options o;
  o.plugin_options["ops_cpu.small_gemm"] = false;
  for (int gates : {3, 4}) {
    SCOPED_TRACE(gates == 4 ? "lstm" : "gru");
    const RnnShape s{gates, 6, 10, 2, true, true};
    expectBriskLayer(s, true, o);
    const std::string detail =
        kernelDetail(*Module::fromIR(gates == 4 ? lstmIR(s, true) : gruIR(s, true), o),
                     gates == 4 ? "aten::lstm.input" : "aten::gru.input");
    EXPECT_EQ(detail.find("small_gemm"), std::string::npos) << detail;
  }
}

// Inputs the loop does not take (here a non-contiguous sequence) run ATen's layer on
// the same weights inside the same kernel: ATen's exact bits.
TEST(BriskRnn, NonContiguousInputRunsAten) {
  for (int gates : {3, 4}) {
    SCOPED_TRACE(gates == 4 ? "lstm" : "gru");
    const RnnShape s{gates, 4, 6, 2, true, true};
    std::vector<c10::IValue> in = rnnInputs(s, false, 5, 3);
    in[0] = at::randn({3, 5, 4}).transpose(0, 1);
    OpTester(gates == 4 ? lstmIR(s, false) : gruIR(s, false))
        .inputs(in)
        .tolerance(kExact)
        .expectKernel(gates == 4 ? "aten::lstm.input" : "aten::gru.input", kOutVariant)
        .run();
  }
}

TEST(NativeRnn, LstmTwoLayerBidirectionalBatchFirst) {
  const RnnShape s{4, 5, 6, 2, true, true};
  OpTester(lstmIR(s, true))
      .inputs(lstmInputs(s, true, 7, 2))
      .inputs(lstmInputs(s, true, 3, 5))
      .inputs(lstmInputs(s, true, 1, 1))
      .tolerance(kExact)
      .options(atenKernels())
      .expectKernel("aten::lstm.input", kNative)
      .run();
}

TEST(NativeRnn, LstmSequenceFirstNoBiasWithProjection) {
  const RnnShape s{4, 3, 8, 1, false, false, 5};
  OpTester(lstmIR(s, false))
      .inputs(lstmInputs(s, false, 6, 3))
      .inputs(lstmInputs(s, false, 2, 1))
      .tolerance(kExact)
      .expectKernel("aten::lstm.input", kNative)
      .run();
}

// nn.GRU's graph: the weights as a constant list, hx a model input.
TEST(NativeRnn, GruBidirectionalTwoLayers) {
  const RnnShape s{3, 4, 6, 2, true, true};
  for (bool batch_first : {false, true}) {
    SCOPED_TRACE(batch_first ? "batch_first" : "sequence first");
    const std::string ir = "graph(%x : Tensor, %h0 : Tensor):\n" + paramsIR(s) + flagsIR(s, batch_first) +
                           "  %y : Tensor, %h : Tensor = aten::gru(%x, %h0, %params, %has_biases, %layers, "
                           "%dropout, %train, %bidir, %batch_first)\n"
                           "  %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %h)\n"
                           "  return (%r)";
    auto in = [&](int64_t len, int64_t batch) {
      std::vector<c10::IValue> v = lstmInputs(s, batch_first, len, batch);
      v.pop_back();
      return v;
    };
    OpTester(ir)
        .inputs(in(5, 2))
        .inputs(in(9, 4))
        .tolerance(kExact)
        .options(atenKernels())
        .expectKernel("aten::gru.input", kNative)
        .run();
  }
}

// Weights that are not constants (here: model inputs) are read per run.
TEST(NativeRnn, GruWeightsReadPerRun) {
  const std::string ir = R"IR(
graph(%x : Tensor, %h0 : Tensor, %params : Tensor[]):
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %dropout : float = prim::Constant[value=0.]()
  %y : Tensor, %h : Tensor = aten::gru(%x, %h0, %params, %true, %one, %dropout, %false, %false, %false)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %h)
  return (%r))IR";
  auto params = [](int64_t in, int64_t h) {
    return c10::List<at::Tensor>(
        {at::randn({3 * h, in}), at::randn({3 * h, h}), at::randn({3 * h}), at::randn({3 * h})});
  };
  OpTester(ir)
      .inputs({at::randn({4, 2, 3}), at::randn({1, 2, 5}), params(3, 5)})
      .inputs({at::randn({2, 3, 3}), at::randn({1, 3, 5}), params(3, 5)})
      .tolerance(kExact)
      .expectKernel("aten::gru.input", kNative)
      .run();
  auto m = Module::fromIR(ir);
  for (const NodeKernelInfo& info : m->kernelReport())
    if (info.op == "aten::gru.input") {
      EXPECT_NE(info.detail.find("read per run"), std::string::npos) << info.detail;
    }
}

// The packed-sequence overloads (what pack_padded_sequence feeds nn.LSTM / nn.GRU).
TEST(NativeRnn, PackedSequences) {
  const RnnShape s{4, 3, 4, 1, true, true};
  const std::string lstm = "graph(%data : Tensor, %sizes : Tensor, %h0 : Tensor, %c0 : Tensor):\n" + paramsIR(s) +
                           flagsIR(s, false) +
                           "  %hx : Tensor[] = prim::ListConstruct(%h0, %c0)\n"
                           "  %y : Tensor, %h : Tensor, %c : Tensor = aten::lstm(%data, %sizes, %hx, %params, "
                           "%has_biases, %layers, %dropout, %train, %bidir)\n"
                           "  %r : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%y, %h, %c)\n"
                           "  return (%r)";
  // Sequences of lengths 3, 2, 2 (batch_sizes [3, 3, 1]) and 4, 1 ([2, 1, 1, 1]).
  OpTester(lstm)
      .inputs({at::randn({7, 3}), at::tensor({3, 3, 1}, at::kLong), at::randn({2, 3, 4}), at::randn({2, 3, 4})})
      .inputs({at::randn({5, 3}), at::tensor({2, 1, 1, 1}, at::kLong), at::randn({2, 2, 4}), at::randn({2, 2, 4})})
      .tolerance(kExact)
      .expectKernel("aten::lstm.data", kNative)
      .run();

  const RnnShape g{3, 3, 4, 1, false, true};
  const std::string gru = "graph(%data : Tensor, %sizes : Tensor, %h0 : Tensor):\n" + paramsIR(g) + flagsIR(g, false) +
                          "  %y : Tensor, %h : Tensor = aten::gru(%data, %sizes, %h0, %params, %has_biases, %layers, "
                          "%dropout, %train, %bidir)\n"
                          "  %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %h)\n"
                          "  return (%r)";
  OpTester(gru)
      .inputs({at::randn({7, 3}), at::tensor({3, 3, 1}, at::kLong), at::randn({1, 3, 4})})
      .inputs({at::randn({5, 3}), at::tensor({2, 1, 1, 1}, at::kLong), at::randn({1, 2, 4})})
      .tolerance(kExact)
      .expectKernel("aten::gru.data", kNative)
      .run();
}

TEST(NativeRnn, FrozenWeightsGatheredAtLoad) {
  auto m = Module::fromIR(lstmIR(RnnShape{4, 5, 6, 2, true, true}, true), atenKernels());
  bool seen = false;
  for (const NodeKernelInfo& info : m->kernelReport())
    if (info.op == "aten::lstm.input") {
      seen = true;
      EXPECT_NE(info.detail.find("gathered at load"), std::string::npos) << info.detail;
    }
  EXPECT_TRUE(seen);
}

TEST(NativeRnn, TrainModeRefusedAtLoad) {
  try {
    Module::fromIR(lstmIR(RnnShape{4, 5, 6, 1, false, true}, false, /*train=*/true));
    FAIL() << "train=true loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train=true"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("aten::lstm"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace brisk::testing
