// ops_cpu.decompose_encoder_layer (ops_cpu/fused/encoder_layer_decompose.h): an
// aten::_transformer_encoder_layer_fwd with frozen weights becomes linear / SDPA /
// layer_norm behind a prim::If that keeps the fused node for calls with a mask. Results
// are compared with the TorchScript interpreter running the fused op (ATen's kernel) on
// the same IR, within fp32 rounding scaled by the values, for relu and gelu, both norm
// orders, head sizes on both of ATen's attention paths (D % 8 == 0: SDPA; else its math
// path), shapes that change between calls and an empty one, with the delegates off and
// on (oneDNN's matmul at sizes past its thresholds); inputs must stay unchanged
// (OpTester). Calls with a mask, nested inputs and other ranks take the fused node.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/executor/module.h"
#include "core/graph/graph.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr const char* kPass = "ops_cpu.decompose_encoder_layer";
constexpr const char* kOp = "aten::_transformer_encoder_layer_fwd";
// fp32 rounding of a different GEMM and attention order, relative to the values.
const Tolerance kTol{1e-4, 1e-5, 1e-5};

struct Dims {
  int64_t e, heads, ff;
};

// One encoder layer whose weights are constants (as in a frozen model), as IR.
struct LayerIR {
  Dims d;
  bool gelu = false, norm_first = false;
  std::string mask = "%none";  // "%mask" (a graph input), "%none" or a constant's name
  std::string params = "%src : Tensor";
  std::string prelude = "";  // lines before the layer
  std::string src = "%src";
  std::string epilogue = "  return (%y)\n";

  bool weights_as_inputs = false;  // graph inputs instead of constants

  std::string str() const {
    const int64_t e = d.e, f = d.ff;
    const std::vector<std::pair<const char*, std::vector<int64_t>>> weights = {
        {"qw", {3 * e, e}}, {"qb", {3 * e}}, {"pw", {e, e}}, {"pb", {e}},   {"n1w", {e}}, {"n1b", {e}},
        {"n2w", {e}},       {"n2b", {e}},   {"f1w", {f, e}}, {"f1b", {f}}, {"f2w", {e, f}}, {"f2b", {e}}};
    std::string inputs = params, constants;
    for (const auto& [name, shape] : weights) {
      if (weights_as_inputs)
        inputs += std::string(", %") + name + " : Tensor";
      else
        constants += constTensorIR(name, shape);
    }
    return "graph(" + inputs + "):\n" + constants + "  %E : int = prim::Constant[value=" + std::to_string(e) +
           "]()\n  %H : int = prim::Constant[value=" + std::to_string(d.heads) +
           "]()\n  %g : bool = prim::Constant[value=" + (gelu ? "1" : "0") +
           "]()\n  %nf : bool = prim::Constant[value=" + (norm_first ? "1" : "0") +
           "]()\n"
           "  %eps : float = prim::Constant[value=1.0000000000000001e-05]()\n"
           "  %none : NoneType = prim::Constant()\n"
           "  %mt : int = prim::Constant[value=1]()\n" +  // mask_type 1: a key padding mask
           prelude + "  %y : Tensor = aten::_transformer_encoder_layer_fwd(" + src +
           ", %E, %H, %qw, %qb, %pw, %pb, %g, %nf, %eps, %n1w, %n1b, %n2w, %n2b, %f1w, %f1b, %f2w, %f2b, " + mask +
           ", %mt)\n" + epilogue;
  }
};

std::string layerIR(Dims d, bool gelu, bool norm_first) { return LayerIR{d, gelu, norm_first}.str(); }

std::string flags(bool gelu, bool norm_first) {
  return std::string("gelu=") + (gelu ? "1" : "0") + " norm_first=" + (norm_first ? "1" : "0");
}

size_t changedBy(const Module& m, const std::string& pass) {
  for (const PassResult& r : m.passReport())
    if (r.name == pass) return r.changed;
  ADD_FAILURE() << pass << " not in the pass report";
  return 0;
}

size_t countKind(const Module& m, const std::string& kind) {
  size_t n = 0;
  for (const Node* node : m.compiled()->graph().allNodes()) n += node->kind() == kind;
  return n;
}

Options noDelegates() {
  Options o;
  o.use_delegates = false;
  return o;
}

TEST(EncoderLayerDecompose, RewritesFrozenUnmaskedLayer) {
  auto m = Module::fromIR(layerIR({16, 4, 32}, false, false), noDelegates(), "layer");
  EXPECT_EQ(changedBy(*m, kPass), 1u);
  // The attention and the four linear layers are ordinary nodes now; the fused node
  // stays only as the other branch (mask None is a constant here, but nested inputs
  // and other ranks still need it), where its kernel does not pack the weights.
  EXPECT_EQ(countKind(*m, "aten::scaled_dot_product_attention"), 1u);
  EXPECT_EQ(countKind(*m, "aten::linear"), 4u);
  EXPECT_EQ(countKind(*m, "aten::layer_norm"), 2u);
  EXPECT_EQ(countKind(*m, kOp), 1u);
  EXPECT_EQ(kernelDetail(*m, kOp), "at::native::transformer_encoder_layer_forward");
}

// Head size 4 (ATen's MHA takes its math path) and 8 (its SDPA path), 1 to 240 rows.
TEST(EncoderLayerDecompose, MatchesFusedKernel) {
  for (Dims d : {Dims{16, 4, 32}, Dims{32, 4, 48}}) {
    for (bool gelu : {false, true}) {
      for (bool norm_first : {false, true}) {
        SCOPED_TRACE("E=" + std::to_string(d.e) + " " + flags(gelu, norm_first));
        OpTester(layerIR(d, gelu, norm_first))
            .inputs({at::randn({1, 1, d.e})})
            .inputs({at::randn({1, 8, d.e})})
            .inputs({at::randn({3, 12, d.e})})
            .inputs({at::randn({4, 60, d.e})})
            .tolerance(kTol)
            .expectKernel("aten::scaled_dot_product_attention", KernelKind::kNative)
            .run();
      }
    }
  }
}

// Large enough for the onednn delegate to claim the linear layers (>= 9 rows and 2^20
// multiply-adds), fused with relu / gelu and the residual adds.
TEST(EncoderLayerDecompose, MatchesFusedKernelOnDelegates) {
  // Seeded: the weights are standard normal, so the layer's values reach the hundreds
  // and fp32 reordering now and then (about 1 run in 10 unseeded) moved one output past
  // kTol. The tolerance stays; the inputs are fixed.
  at::manual_seed(20261128);
  const Dims d{64, 8, 256};
  // The delegate takes linear layers by default only on CPUs with AVX-512
  // (delegates/onednn/plugin.cc); this test is about the decomposition, on any CPU.
  Options o;
  o.plugin_options["onednn.linear"] = true;
  for (bool gelu : {false, true}) {
    for (bool norm_first : {false, true}) {
      SCOPED_TRACE(flags(gelu, norm_first));
      OpTester(layerIR(d, gelu, norm_first))
          .options(o)
          .withDelegates()
          .inputs({at::randn({2, 64, d.e})})
          .inputs({at::randn({1, 5, d.e})})
          .inputs({at::randn({3, 100, d.e})})
          .tolerance(kTol)
          .expectKernel(kDelegateKind, KernelKind::kDelegate)
          .run();
    }
  }
}

// An empty batch or sequence: ATen returns a copy of src; the decomposed ops give the
// same empty tensor.
TEST(EncoderLayerDecompose, EmptyInput) {
  for (bool norm_first : {false, true}) {
    SCOPED_TRACE(flags(false, norm_first));
    OpTester(layerIR({16, 4, 32}, false, norm_first))
        .inputs({at::randn({2, 0, 16})})
        .inputs({at::randn({0, 5, 16})})
        .inputs({at::randn({2, 3, 16})})
        .tolerance(kTol)
        .run();
  }
}

// The mask is a run-time value, as nn.TransformerEncoder computes it: None takes the
// decomposed branch, a key padding mask (mask_type 1) the fused node, bit for bit ATen's.
TEST(EncoderLayerDecompose, RuntimeMask) {
  LayerIR layer{{16, 4, 32}};
  layer.mask = "%mask";
  layer.params = "%src : Tensor, %mask : Tensor?";
  const std::string ir = layer.str();
  auto padding = [](int64_t b, int64_t l) {
    at::Tensor m = at::rand({b, l}) > 0.6;
    m.select(1, 0).fill_(false);  // every row keeps its first key
    return m;
  };
  auto m = Module::fromIR(ir, noDelegates(), "layer");
  EXPECT_EQ(changedBy(*m, kPass), 1u);
  OpTester(ir)
      .inputs({at::randn({2, 7, 16}), c10::IValue()})
      .inputs({at::randn({3, 9, 16}), c10::IValue()})
      .tolerance(kTol)
      .run();
  OpTester(ir)
      .inputs({at::randn({2, 7, 16}), padding(2, 7)})
      .inputs({at::randn({3, 9, 16}), padding(3, 9)})
      .tolerance(Tolerance{0, 0, 0})
      .run();
}

// nn.TransformerEncoder with enable_nested_tensor and a padding mask hands its layers a
// nested tensor and mask None: the fused node serves it.
TEST(EncoderLayerDecompose, NestedInputTakesFusedNode) {
  LayerIR layer{{16, 4, 32}, true, false};
  layer.params = "%src : Tensor, %keep : Tensor";
  layer.prelude =
      "  %check : bool = prim::Constant[value=1]()\n"
      "  %pad : float = prim::Constant[value=0.]()\n"
      "  %nt : Tensor = aten::_nested_tensor_from_mask(%src, %keep, %check)\n";
  layer.src = "%nt";
  layer.epilogue =
      "  %out : Tensor = aten::to_padded_tensor(%y, %pad, %none)\n"
      "  return (%out)\n";
  const std::string ir = layer.str();
  auto inputs = [](int64_t b, int64_t l) {
    at::Tensor lengths = at::randint(1, l + 1, {b}, at::kLong);
    lengths[0] = l;
    return std::vector<c10::IValue>{at::randn({b, l, 16}), at::arange(l).unsqueeze(0) < lengths.unsqueeze(1)};
  };
  auto m = Module::fromIR(ir, noDelegates(), "layer");
  EXPECT_EQ(changedBy(*m, kPass), 1u);
  OpTester(ir).inputs(inputs(2, 5)).inputs(inputs(4, 9)).tolerance(Tolerance{0, 0, 0}).run();
}

// A 2-d src is an error of ATen's kernel; the fused node still raises it.
TEST(EncoderLayerDecompose, OtherRankRaisesAtensError) {
  auto m = Module::fromIR(layerIR({16, 4, 32}, false, false), noDelegates(), "layer");
  EXPECT_ANY_THROW(m->run({at::randn({7, 16})}));
}

// Left alone: weights that are not constants, a constant mask, and everything when the
// pass is disabled.
TEST(EncoderLayerDecompose, LeavesOtherLayersAlone) {
  LayerIR unfrozen{{16, 4, 32}};
  unfrozen.weights_as_inputs = true;
  const std::string weights_as_inputs = unfrozen.str();
  // A constant key padding mask for batch 2, length 6 (true = padding; every row keeps
  // its first key), folded at load.
  LayerIR masked{{16, 4, 32}};
  masked.mask = "%cm";
  masked.prelude = constTensorIR("cmv", {2, 6}) +
                   "  %half : float = prim::Constant[value=0.5]()\n"
                   "  %cm : Tensor = aten::gt(%cmv, %half)\n";
  const std::string const_mask = masked.str();
  Options disabled = noDelegates();
  disabled.disabled_passes.push_back(kPass);
  for (const auto& [ir, options] : {std::make_pair(weights_as_inputs, noDelegates()),
                                    std::make_pair(const_mask, noDelegates()),
                                    std::make_pair(layerIR({16, 4, 32}, false, false), disabled)}) {
    auto m = Module::fromIR(ir, options, "layer");
    EXPECT_EQ(changedBy(*m, kPass), 0u);
    EXPECT_EQ(countKind(*m, "aten::scaled_dot_product_attention"), 0u);
    EXPECT_EQ(countKind(*m, kOp), 1u);
    EXPECT_EQ(countKind(*m, "prim::If"), 0u);
  }
  OpTester(const_mask).inputs({at::randn({2, 6, 16})}).tolerance(Tolerance{0, 0, 0}).run();
}

}  // namespace
}  // namespace brisk::testing
