// The fused transformer ops of torch.nn's inference fast path:
// _transformer_encoder_layer_fwd, _native_multi_head_attention, and the nested-tensor
// conversions around them (_nested_tensor_from_mask, to_padded_tensor).
//
// _transformer_encoder_layer_fwd with frozen weights runs its linear layers on brisk's
// packed GEMM (encoder_layer_packed.h) while ops_cpu.small_gemm is on. Otherwise, and for
// the other ops, each kernel calls the ATen CPU implementation the dispatcher would pick
// (at::native::transformer_encoder_layer_forward, ...) directly: no boxing into an
// IValue stack, no dispatcher hop, and the op's constant arguments (sizes, flags,
// eps, frozen weights) read once at load. The computation is ATen's own on the same
// operands, so results are bit-identical to the interpreter on any CPU. Inputs the CPU
// implementation does not serve (other tensor kinds) go through the dispatcher's op,
// which is always correct. The results are fresh tensors (kNative: the runtime neither
// retains nor plans them).
#include <ATen/ATen.h>
#include <ATen/ops/_native_multi_head_attention_native.h>
#include <ATen/ops/_nested_tensor_from_mask_native.h>
#include <ATen/ops/_transformer_encoder_layer_fwd_native.h>
#include <ATen/ops/to_padded_tensor_native.h>

#include "ops_cpu/fused/encoder_layer_decompose.h"
#include "ops_cpu/native/attention.h"
#include "ops_cpu/native/common.h"
#include "ops_cpu/native/encoder_layer_packed.h"

namespace brisk::ops_cpu::native {
namespace {

// A Tensor / Tensor? argument: the constant (a frozen weight) kept from load, or the
// slot read per run.
class TensorArg {
 public:
  TensorArg(const Node& n, size_t i) : index_(i) {
    if (isConst(n, i)) {
      is_const_ = true;
      if (constant(n, i).isTensor()) value_ = constant(n, i).toTensor();
    }
  }
  // Undefined when the argument is None.
  const at::Tensor& get(const KernelContext& ctx) const {
    if (is_const_) return value_;
    const c10::IValue& v = ctx.input(index_);
    return v.isTensor() ? v.toTensor() : undefined();
  }
  // The constant read at load; undefined when the argument is a run-time value or None.
  const at::Tensor& frozen() const { return is_const_ ? value_ : undefined(); }
  c10::optional<at::Tensor> optional(const KernelContext& ctx) const {
    const at::Tensor& t = get(ctx);
    return t.defined() ? c10::optional<at::Tensor>(t) : c10::nullopt;
  }

 private:
  static const at::Tensor& undefined() {
    static const at::Tensor t;
    return t;
  }
  size_t index_;
  bool is_const_ = false;
  at::Tensor value_;
};

std::vector<TensorArg> tensorArgs(const Node& n, std::initializer_list<size_t> indices) {
  std::vector<TensorArg> out;
  for (size_t i : indices) out.emplace_back(n, i);
  return out;
}

std::optional<int64_t> constInt(const Node& n, size_t i) {
  if (!isConst(n, i) || !constant(n, i).isInt()) return std::nullopt;
  return constant(n, i).toInt();
}
std::optional<bool> constBool(const Node& n, size_t i) {
  if (!isConst(n, i) || !constant(n, i).isBool()) return std::nullopt;
  return constant(n, i).toBool();
}
std::optional<double> constDouble(const Node& n, size_t i) {
  if (!isConst(n, i) || !(constant(n, i).isDouble() || constant(n, i).isInt())) return std::nullopt;
  return constant(n, i).isDouble() ? constant(n, i).toDouble() : static_cast<double>(constant(n, i).toInt());
}
// An int? argument (mask_type: computed by the model's own checks at run time): the
// constant read at load, or the slot read per run.
class OptIntArg {
 public:
  static c10::optional<int64_t> toOpt(const c10::IValue& v) {
    return v.isNone() ? c10::nullopt : c10::optional<int64_t>(v.toInt());
  }
  OptIntArg(const Node& n, size_t i) : index_(i) {
    if (isConst(n, i)) {
      is_const_ = true;
      value_ = toOpt(constant(n, i));
    }
  }
  c10::optional<int64_t> get(const KernelContext& ctx) const {
    return is_const_ ? value_ : toOpt(ctx.input(index_));
  }

 private:
  size_t index_;
  bool is_const_ = false;
  c10::optional<int64_t> value_;
};

// Dense CPU (the CPU dispatch key) or nested CPU: the tensors the fused ops' CPU
// implementations are registered for.
bool cpuOrNestedCpu(const at::Tensor& t) {
  const auto ks = t.unsafeGetTensorImpl()->key_set();
  return ks.has(c10::DispatchKey::CPU) || ks.has(c10::DispatchKey::NestedTensorCPU);
}

// _transformer_encoder_layer_fwd(Tensor src, int embed_dim, int num_heads,
//   Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias,
//   bool use_gelu, bool norm_first, float eps, Tensor norm_weight_1, Tensor norm_bias_1,
//   Tensor norm_weight_2, Tensor norm_bias_2, Tensor ffn_weight_1, Tensor ffn_bias_1,
//   Tensor ffn_weight_2, Tensor ffn_bias_2, Tensor? mask=None, int? mask_type=None)
std::unique_ptr<Kernel> encoderLayer(KernelBuildContext& b, bool small_gemm) {
  const Node& n = b.node();
  if (n.inputs().size() != 20) return nullptr;
  auto embed_dim = constInt(n, 1), num_heads = constInt(n, 2);
  auto use_gelu = constBool(n, 7), norm_first = constBool(n, 8);
  auto eps = constDouble(n, 9);
  const OptIntArg mask_type(n, 19);
  if (!embed_dim || !num_heads || !use_gelu || !norm_first || !eps) return nullptr;
  // src, the 12 weights/biases, mask.
  auto t = tensorArgs(n, {0, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15, 16, 17, 18});
  const int64_t e = *embed_dim, h = *num_heads;
  const bool gelu = *use_gelu, nf = *norm_first;
  const double ep = *eps;
  // Frozen weights: the linear layers on the packed GEMM (encoder_layer_packed.h) for
  // calls without a mask, unless ops_cpu.small_gemm is off. (The mask is a run-time
  // value: nn.TransformerEncoder's own checks compute it, None when unmasked.)
  std::shared_ptr<const PackedEncoderLayer> packed;
  // The fused node ops_cpu.decompose_encoder_layer keeps for calls with a mask (or a
  // nested input), which the packed path never serves: packing would only cost memory.
  const bool masked_branch = n.attributes().count(kEncoderLayerMaskedBranch) != 0;
  if (small_gemm && !masked_branch) {
    const EncoderLayerWeights w{t[1].frozen(), t[2].frozen(), t[3].frozen(),  t[4].frozen(),
                                t[5].frozen(), t[6].frozen(), t[7].frozen(),  t[8].frozen(),
                                t[9].frozen(), t[10].frozen(), t[11].frozen(), t[12].frozen()};
    if (auto l = PackedEncoderLayer::make(w, e, h, gelu, nf, ep))
      packed = std::make_shared<const PackedEncoderLayer>(std::move(*l));
  }
  return lambda(
      [t, e, h, gelu, nf, ep, mask_type, packed](KernelContext& ctx) {
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        const at::Tensor& src = t[0].get(ctx);
        if (packed && !t[13].get(ctx).defined()) {
          if (at::Tensor r = packed->run(src); r.defined()) {
            ctx.output(0) = std::move(r);
            return;
          }
        }
        const c10::optional<at::Tensor> mask = t[13].optional(ctx);
        bool direct = cpuOrNestedCpu(src) && (!mask || cpuOrNestedCpu(*mask));
        for (size_t i = 1; direct && i < 13; ++i) direct = t[i].get(ctx).defined() && cpuOrNestedCpu(t[i].get(ctx));
        auto fn = direct ? &at::native::transformer_encoder_layer_forward : &at::_transformer_encoder_layer_fwd;
        ctx.output(0) = fn(src, e, h, t[1].get(ctx), t[2].get(ctx), t[3].get(ctx), t[4].get(ctx), gelu, nf, ep,
                           t[5].get(ctx), t[6].get(ctx), t[7].get(ctx), t[8].get(ctx), t[9].get(ctx), t[10].get(ctx),
                           t[11].get(ctx), t[12].get(ctx), mask, mask_type.get(ctx));
      },
      packed ? "brisk packed GEMM for the linear layers + ATen's attention and layer norm / "
               "at::native::transformer_encoder_layer_forward"
             : "at::native::transformer_encoder_layer_forward");
}

// _native_multi_head_attention(Tensor query, Tensor key, Tensor value, int embed_dim,
//   int num_head, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight,
//   Tensor proj_bias, Tensor? mask=None, bool need_weights=True,
//   bool average_attn_weights=True, int? mask_type=None) -> (Tensor, Tensor)
std::unique_ptr<Kernel> multiHeadAttention(KernelBuildContext& b) {
  const Node& n = b.node();
  if (n.inputs().size() != 13 || n.outputs().size() != 2) return nullptr;
  auto embed_dim = constInt(n, 3), num_head = constInt(n, 4);
  auto need_weights = constBool(n, 10), average = constBool(n, 11);
  const OptIntArg mask_type(n, 12);
  if (!embed_dim || !num_head || !need_weights || !average) return nullptr;
  // query, key, value, the 4 weights/biases, mask.
  auto t = tensorArgs(n, {0, 1, 2, 5, 6, 7, 8, 9});
  const int64_t e = *embed_dim, h = *num_head;
  const bool nw = *need_weights, avg = *average;
  return lambda(
      [t, e, h, nw, avg, mask_type](KernelContext& ctx) {
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        const c10::optional<at::Tensor> mask = t[7].optional(ctx);
        bool direct = !mask || cpuOrNestedCpu(*mask);
        for (size_t i = 0; direct && i < 7; ++i) direct = t[i].get(ctx).defined() && cpuOrNestedCpu(t[i].get(ctx));
        auto fn = direct ? &at::native::native_multi_head_attention_cpu : &at::_native_multi_head_attention;
        auto r = fn(t[0].get(ctx), t[1].get(ctx), t[2].get(ctx), e, h, t[3].get(ctx), t[4].get(ctx), t[5].get(ctx),
                    t[6].get(ctx), mask, nw, avg, mask_type.get(ctx));
        ctx.output(0) = std::move(std::get<0>(r));
        ctx.output(1) = std::move(std::get<1>(r));
      },
      "at::native::native_multi_head_attention_cpu");
}

// _nested_tensor_from_mask(Tensor t, Tensor mask, bool mask_check=True): registered for
// (dense) CPU only; a nested result.
std::unique_ptr<Kernel> nestedFromMask(KernelBuildContext& b) {
  const Node& n = b.node();
  if (n.inputs().size() != 3) return nullptr;
  auto check = constBool(n, 2);
  if (!check) return nullptr;
  const bool mask_check = *check;
  return lambda(
      [mask_check](KernelContext& ctx) {
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        const at::Tensor& t = ctx.tensor(0);
        const at::Tensor& mask = ctx.tensor(1);
        const auto cpu = c10::DispatchKey::CPU;
        const bool direct = t.unsafeGetTensorImpl()->key_set().has(cpu) && mask.unsafeGetTensorImpl()->key_set().has(cpu);
        ctx.output(0) = direct ? at::native::NestedTensor_nested_tensor_from_mask(t, mask, mask_check)
                               : at::_nested_tensor_from_mask(t, mask, mask_check);
      },
      "at::native::NestedTensor_nested_tensor_from_mask");
}

// to_padded_tensor(Tensor self, float padding, int[]? output_size=None): registered for
// nested tensors only (a dense input gets the dispatcher's error, as in the interpreter).
std::unique_ptr<Kernel> toPadded(KernelBuildContext& b) {
  const Node& n = b.node();
  if (n.inputs().size() != 3) return nullptr;
  auto padding = constDouble(n, 1);
  if (!padding || !isConst(n, 2)) return nullptr;
  std::optional<std::vector<int64_t>> size;
  if (!constant(n, 2).isNone()) {
    if (!constant(n, 2).isIntList()) return nullptr;
    size = constant(n, 2).toIntVector();
  }
  const double pad = *padding;
  return lambda(
      [pad, size](KernelContext& ctx) {
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        const at::Tensor& self = ctx.tensor(0);
        at::OptionalIntArrayRef out_size;
        if (size) out_size = c10::IntArrayRef(*size);
        ctx.output(0) = self.unsafeGetTensorImpl()->key_set().has(c10::DispatchKey::NestedTensorCPU)
                            ? at::native::NestedTensor_to_padded_tensor_generic(self, pad, out_size)
                            : self.to_padded_tensor(pad, out_size);
      },
      "at::native::NestedTensor_to_padded_tensor_generic");
}

}  // namespace

void registerTransformerKernels(PluginRegistrar& r) {
  r.native("aten::scaled_dot_product_attention", scaledDotProductAttention);
  const PluginOption<bool> small_gemm = out::declareSmallGemmOption(r);
  r.native("aten::_transformer_encoder_layer_fwd",
           [small_gemm](KernelBuildContext& b) { return encoderLayer(b, b.pluginOption(small_gemm)); });
  r.native("aten::_native_multi_head_attention", multiHeadAttention);
  r.native("aten::_nested_tensor_from_mask", nestedFromMask);
  r.native("aten::to_padded_tensor", toPadded);
}

}  // namespace brisk::ops_cpu::native
