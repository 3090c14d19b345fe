// ops_cpu native kernels for the fused transformer ops (ops_cpu/native/transformer.cc):
// direct calls of ATen's CPU implementations on the same operands, so results are
// bit-identical to the interpreter's on any CPU (zero tolerance: the arithmetic is ATen's
// own, call for call), for batch/sequence shapes that grow between sets; except an
// encoder layer with frozen weights, whose linear layers run on brisk's packed GEMM
// while ops_cpu.small_gemm is on (compared with a tolerance).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/executor/module.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kNative = KernelKind::kNative;
constexpr int64_t kE = 16, kFF = 32;

// qkv_w, qkv_b, proj_w, proj_b, norm_w1, norm_b1, norm_w2, norm_b2, ffn_w1, ffn_b1,
// ffn_w2, ffn_b2 of one encoder layer (embed 16, feed-forward 32).
std::vector<c10::IValue> layerWeights() {
  at::manual_seed(7);
  return {at::randn({3 * kE, kE}) * 0.3, at::randn({3 * kE}) * 0.1, at::randn({kE, kE}) * 0.3,
          at::randn({kE}) * 0.1,         at::rand({kE}) + 0.5,     at::randn({kE}) * 0.1,
          at::rand({kE}) + 0.5,          at::randn({kE}) * 0.1,    at::randn({kFF, kE}) * 0.3,
          at::randn({kFF}) * 0.1,        at::randn({kE, kFF}) * 0.3, at::randn({kE}) * 0.1};
}

std::vector<c10::IValue> with(at::Tensor first, std::vector<c10::IValue> rest) {
  rest.insert(rest.begin(), std::move(first));
  return rest;
}

std::string encoderLayerIR(bool gelu, bool norm_first) {
  return std::string(R"IR(
graph(%src : Tensor, %qw : Tensor, %qb : Tensor, %pw : Tensor, %pb : Tensor, %n1w : Tensor, %n1b : Tensor,
      %n2w : Tensor, %n2b : Tensor, %f1w : Tensor, %f1b : Tensor, %f2w : Tensor, %f2b : Tensor):
  %E : int = prim::Constant[value=16]()
  %H : int = prim::Constant[value=4]()
  %gelu : bool = prim::Constant[value=)IR") +
         (gelu ? "1" : "0") + R"IR(]()
  %nf : bool = prim::Constant[value=)IR" + (norm_first ? "1" : "0") + R"IR(]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::_transformer_encoder_layer_fwd(%src, %E, %H, %qw, %qb, %pw, %pb, %gelu, %nf, %eps, %n1w, %n1b, %n2w, %n2b, %f1w, %f1b, %f2w, %f2b, %none, %none)
  return (%y))IR";
}

TEST(NativeTransformer, EncoderLayerBitExact) {
  for (bool gelu : {false, true}) {
    for (bool norm_first : {false, true}) {
      SCOPED_TRACE(std::string("gelu=") + (gelu ? "1" : "0") + " norm_first=" + (norm_first ? "1" : "0"));
      OpTester(encoderLayerIR(gelu, norm_first))
          .inputs(with(at::randn({1, 8, kE}), layerWeights()))
          .inputs(with(at::randn({3, 12, kE}), layerWeights()))
          .tolerance(Tolerance{0, 0, 0})
          .expectKernel("aten::_transformer_encoder_layer_fwd", kNative)
          .run();
    }
  }
}

// One encoder layer whose weights are constants, as in a loaded model.
std::string frozenEncoderLayerIR(bool gelu, bool norm_first) {
  return "graph(%src : Tensor):\n" + constTensorIR("qw", {3 * kE, kE}) + constTensorIR("qb", {3 * kE}) +
         constTensorIR("pw", {kE, kE}) + constTensorIR("pb", {kE}) + constTensorIR("n1w", {kE}) +
         constTensorIR("n1b", {kE}) + constTensorIR("n2w", {kE}) + constTensorIR("n2b", {kE}) +
         constTensorIR("f1w", {kFF, kE}) + constTensorIR("f1b", {kFF}) + constTensorIR("f2w", {kE, kFF}) +
         constTensorIR("f2b", {kE}) +
         "  %E : int = prim::Constant[value=16]()\n"
         "  %H : int = prim::Constant[value=4]()\n"
         "  %g : bool = prim::Constant[value=" +
         (gelu ? "1" : "0") +
         "]()\n"
         "  %nf : bool = prim::Constant[value=" +
         (norm_first ? "1" : "0") +
         "]()\n"
         "  %eps : float = prim::Constant[value=1.0000000000000001e-05]()\n"
         "  %none : NoneType = prim::Constant()\n"
         "  %y : Tensor = aten::_transformer_encoder_layer_fwd(%src, %E, %H, %qw, %qb, %pw, %pb, %g, %nf, %eps, "
         "%n1w, %n1b, %n2w, %n2b, %f1w, %f1b, %f2w, %f2b, %none, %none)\n"
         "  return (%y)\n";
}

// These tests are about the fused node's own kernel: ops_cpu.decompose_encoder_layer,
// which spells out a frozen layer (tests/ops/encoder_layer_decompose_test.cc), stays off.
Options smallGemm(bool on) {
  Options o;
  o.plugin_options["ops_cpu.small_gemm"] = on;
  o.disabled_passes.push_back("ops_cpu.decompose_encoder_layer");
  return o;
}

// With ops_cpu.small_gemm off the kernel hands ATen the weights as stored, so the GEMMs
// inside are the interpreter's own calls.
TEST(NativeTransformer, EncoderLayerFrozenWeightsBitExact) {
  for (bool norm_first : {false, true}) {
    SCOPED_TRACE(std::string("norm_first=") + (norm_first ? "1" : "0"));
    OpTester(frozenEncoderLayerIR(false, norm_first))
        .options(smallGemm(false))
        .inputs({at::randn({1, 8, kE})})
        .inputs({at::randn({3, 12, kE})})
        .tolerance(Tolerance{0, 0, 0})
        .expectKernel("aten::_transformer_encoder_layer_fwd", kNative)
        .run();
  }
}

// With it on (the default) the four linear layers run on the packed GEMM
// (encoder_layer_packed.h): ATen's result up to the GEMM's rounding, for relu and gelu,
// both norm orders and shapes that grow between calls.
TEST(NativeTransformer, EncoderLayerFrozenWeightsOnPackedGemm) {
  for (bool gelu : {false, true}) {
    for (bool norm_first : {false, true}) {
      SCOPED_TRACE(std::string("gelu=") + (gelu ? "1" : "0") + " norm_first=" + (norm_first ? "1" : "0"));
      OpTester(frozenEncoderLayerIR(gelu, norm_first))
          .options(smallGemm(true))
          .inputs({at::randn({1, 8, kE})})
          .inputs({at::randn({3, 12, kE})})
          .inputs({at::randn({2, 40, kE})})
          .tolerance(Tolerance{1e-4, 1e-4})
          .expectKernel("aten::_transformer_encoder_layer_fwd", kNative)
          .run();
    }
  }
  // The kernel says which path it took.
  auto m = Module::fromIR(frozenEncoderLayerIR(false, false), smallGemm(true), "layer");
  bool packed = false;
  for (const NodeKernelInfo& k : m->kernelReport())
    packed = packed || (k.op == "aten::_transformer_encoder_layer_fwd" && k.detail.find("packed GEMM") != std::string::npos);
  EXPECT_TRUE(packed);
}

TEST(NativeTransformer, MultiHeadAttentionFrozenWeightsBitExact) {
  OpTester("graph(%q : Tensor, %k : Tensor, %v : Tensor):\n" + constTensorIR("qw", {3 * kE, kE}) +
           constTensorIR("qb", {3 * kE}) + constTensorIR("pw", {kE, kE}) + constTensorIR("pb", {kE}) +
           "  %E : int = prim::Constant[value=16]()\n"
           "  %H : int = prim::Constant[value=2]()\n"
           "  %t : bool = prim::Constant[value=1]()\n"
           "  %none : NoneType = prim::Constant()\n"
           "  %y : Tensor, %w : Tensor = aten::_native_multi_head_attention(%q, %k, %v, %E, %H, %qw, %qb, %pw, %pb, "
           "%none, %t, %t, %none)\n"
           "  %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %w)\n"
           "  return (%r)\n")
      .inputs({at::randn({1, 6, kE}), at::randn({1, 6, kE}), at::randn({1, 6, kE})})
      .inputs({at::randn({2, 11, kE}), at::randn({2, 11, kE}), at::randn({2, 11, kE})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::_native_multi_head_attention", kNative)
      .run();
}

// mask_type computed at run time (as nn.TransformerEncoderLayer does): the kernel reads
// it from its slot.
TEST(NativeTransformer, EncoderLayerRuntimeMaskType) {
  OpTester(R"IR(
graph(%src : Tensor, %qw : Tensor, %qb : Tensor, %pw : Tensor, %pb : Tensor, %n1w : Tensor, %n1b : Tensor,
      %n2w : Tensor, %n2b : Tensor, %f1w : Tensor, %f1b : Tensor, %f2w : Tensor, %f2b : Tensor):
  %E : int = prim::Constant[value=16]()
  %H : int = prim::Constant[value=2]()
  %f : bool = prim::Constant[value=0]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %d : int = aten::dim(%src)
  %c : bool = aten::eq(%d, %zero)
  %mt : int? = prim::If(%c)
    block0():
      -> (%zero)
    block1():
      -> (%none)
  %y : Tensor = aten::_transformer_encoder_layer_fwd(%src, %E, %H, %qw, %qb, %pw, %pb, %f, %f, %eps, %n1w, %n1b, %n2w, %n2b, %f1w, %f1b, %f2w, %f2b, %none, %mt)
  return (%y))IR")
      .inputs(with(at::randn({2, 5, kE}), layerWeights()))
      .inputs(with(at::randn({4, 9, kE}), layerWeights()))
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::_transformer_encoder_layer_fwd", kNative)
      .run();
}

std::string mhaIR(bool need_weights, bool average, bool with_mask) {
  return std::string("graph(%q : Tensor, %k : Tensor, %v : Tensor, %qw : Tensor, %qb : Tensor, %pw : Tensor, ") +
         "%pb : Tensor" + (with_mask ? ", %mask : Tensor" : "") + R"IR():
  %E : int = prim::Constant[value=16]()
  %H : int = prim::Constant[value=4]()
  %nw : bool = prim::Constant[value=)IR" +
         (need_weights ? "1" : "0") + R"IR(]()
  %avg : bool = prim::Constant[value=)IR" + (average ? "1" : "0") + R"IR(]()
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %y : Tensor, %w : Tensor = aten::_native_multi_head_attention(%q, %k, %v, %E, %H, %qw, %qb, %pw, %pb, )IR" +
         (with_mask ? "%mask, " : "%none, ") + "%nw, %avg, " + (with_mask ? "%one" : "%none") + R"IR()
  %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %w)
  return (%r))IR";
}

std::vector<c10::IValue> mhaInputs(int64_t b, int64_t l, bool with_mask) {
  at::Tensor x = at::randn({b, l, kE});
  std::vector<c10::IValue> w = layerWeights();
  std::vector<c10::IValue> in = {x, x, x, w[0], w[1], w[2], w[3]};
  if (with_mask) {
    // Key padding mask (mask_type 1): true = padding; every row keeps its first key.
    at::Tensor m = at::rand({b, l}) > 0.6;
    m.select(1, 0).fill_(false);
    in.push_back(m);
  }
  return in;
}

TEST(NativeTransformer, MultiHeadAttentionBitExact) {
  for (bool need_weights : {false, true}) {
    for (bool average : {false, true}) {
      for (bool with_mask : {false, true}) {
        SCOPED_TRACE(std::string("need_weights=") + (need_weights ? "1" : "0") + " average=" + (average ? "1" : "0") +
                     " mask=" + (with_mask ? "1" : "0"));
        OpTester(mhaIR(need_weights, average, with_mask))
            .inputs(mhaInputs(1, 6, with_mask))
            .inputs(mhaInputs(3, 10, with_mask))
            .tolerance(Tolerance{0, 0, 0})
            .expectKernel("aten::_native_multi_head_attention", kNative)
            .run();
      }
    }
  }
}

// The nested-tensor round trip of nn.TransformerEncoder with a key padding mask:
// _nested_tensor_from_mask (true = keep, left-aligned), then to_padded_tensor.
TEST(NativeTransformer, NestedFromMaskToPadded) {
  auto inputs = [](int64_t b, int64_t l) {
    at::Tensor lengths = at::randint(1, l + 1, {b}, at::kLong);
    lengths[0] = l;
    at::Tensor mask = at::arange(l).unsqueeze(0) < lengths.unsqueeze(1);
    return std::vector<c10::IValue>{at::randn({b, l, kE}), mask};
  };
  OpTester(R"IR(
graph(%t : Tensor, %mask : Tensor):
  %check : bool = prim::Constant[value=1]()
  %pad : float = prim::Constant[value=0.]()
  %none : NoneType = prim::Constant()
  %nt : Tensor = aten::_nested_tensor_from_mask(%t, %mask, %check)
  %y : Tensor = aten::to_padded_tensor(%nt, %pad, %none)
  return (%y))IR")
      .inputs(inputs(2, 5))
      .inputs(inputs(4, 9))
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::_nested_tensor_from_mask", kNative)
      .expectKernel("aten::to_padded_tensor", kNative)
      .run();
}

// scaled_dot_product_attention: no mask, a float (additive) mask, a bool mask, causal,
// an explicit scale; heads as a batch dimension.
TEST(NativeTransformer, ScaledDotProductAttention) {
  const std::string ir =
      "graph(%q : Tensor, %k : Tensor, %v : Tensor, %m : Tensor?, %causal : bool, %scale : float?):\n"
      "  %p : float = prim::Constant[value=0.]()\n"
      "  %g : bool = prim::Constant[value=0]()\n"
      "  %y : Tensor = aten::scaled_dot_product_attention(%q, %k, %v, %m, %p, %causal, %scale, %g)\n"
      "  return (%y)\n";
  const c10::IValue none;
  OpTester(ir)
      .inputs({at::randn({1, 2, 5, 8}), at::randn({1, 2, 5, 8}), at::randn({1, 2, 5, 8}), none, false, none})
      .inputs({at::randn({2, 4, 7, 8}), at::randn({2, 4, 7, 8}), at::randn({2, 4, 7, 8}), at::randn({7, 7}), false,
               none})
      .inputs({at::randn({2, 4, 7, 8}), at::randn({2, 4, 7, 8}), at::randn({2, 4, 7, 8}),
               at::rand({7, 7}) > 0.2, false, c10::IValue(0.5)})
      .inputs({at::randn({1, 3, 6, 4}), at::randn({1, 3, 6, 4}), at::randn({1, 3, 6, 4}), none, true, none})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::scaled_dot_product_attention", kNative)
      .run();
}

// With the mask None, dropout 0 and causal / scale constants, brisk's own kernel
// (simd/attention.h) serves fp32 operands of rank 4 and 3, strided rows included (heads
// sliced out of one projection, as nn.MultiheadAttention does), and agrees with ATen to
// fp32 rounding (another summation order and exp); fp64 operands take ATen's op.
TEST(NativeTransformer, ScaledDotProductAttentionOwnKernel) {
  for (const char* flags : {"causal=0, scale=None", "causal=1, scale=0.3"}) {
    SCOPED_TRACE(flags);
    const bool causal = std::string(flags).find("causal=1") != std::string::npos;
    const std::string ir = std::string(
                               "graph(%q : Tensor, %k : Tensor, %v : Tensor):\n"
                               "  %m : NoneType = prim::Constant()\n"
                               "  %p : float = prim::Constant[value=0.]()\n"
                               "  %g : bool = prim::Constant[value=0]()\n") +
                           (causal ? "  %c : bool = prim::Constant[value=1]()\n"
                                     "  %s : float = prim::Constant[value=0.3]()\n"
                                   : "  %c : bool = prim::Constant[value=0]()\n"
                                     "  %s : NoneType = prim::Constant()\n") +
                           "  %y : Tensor = aten::scaled_dot_product_attention(%q, %k, %v, %m, %p, %c, %s, %g)\n"
                           "  return (%y)\n";
    const at::Tensor qkv = at::randn({64, 3, 4, 64});
    auto head = [&](int64_t i) { return qkv.select(1, i).unsqueeze(0).transpose(1, 2); };  // [1, 4, 64, 64]
    OpTester(ir)
        .inputs({head(0), head(1), head(2)})
        .inputs({at::randn({2, 3, 7, 20}), at::randn({2, 3, 9, 20}), at::randn({2, 3, 9, 5})})
        .inputs({at::randn({3, 17, 8}), at::randn({3, 17, 8}), at::randn({3, 17, 8})})
        .inputs({at::randn({1, 2, 5, 8}, at::kDouble), at::randn({1, 2, 5, 8}, at::kDouble),
                 at::randn({1, 2, 5, 8}, at::kDouble)})
        .tolerance(Tolerance{1e-4, 1e-5})
        .expectKernel("aten::scaled_dot_product_attention", kNative)
        .run();
  }
}

}  // namespace
}  // namespace brisk::testing
