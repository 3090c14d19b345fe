#include "ops_cpu/native/encoder_layer_packed.h"

#include <ATen/ATen.h>

#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::native {
namespace {

bool denseFloat(const at::Tensor& t, std::initializer_list<int64_t> sizes) {
  return t.defined() && t.scalar_type() == at::kFloat && out::isDenseCpu(t) && t.sizes().equals(sizes);
}

// y [rows, p.n] = x [rows, p.k] W^T + b as a fresh [batch, seq, p.n] tensor.
at::Tensor linear(const at::Tensor& x, const out::PackedLinear& p, int64_t batch, int64_t seq) {
  at::Tensor y = at::empty({batch, seq, p.n}, x.options());
  out::packedLinear(x.data_ptr<float>(), batch * seq, p, y.data_ptr<float>());
  return y;
}

}  // namespace

std::optional<PackedEncoderLayer> PackedEncoderLayer::make(const EncoderLayerWeights& w, int64_t e, int64_t heads,
                                                           bool use_gelu, bool norm_first, double eps) {
  if (e < 1 || heads < 1 || e % heads != 0 || !w.ffn1_w.defined() || w.ffn1_w.dim() != 2) return std::nullopt;
  const int64_t ff = w.ffn1_w.size(0);
  const bool shapes = denseFloat(w.qkv_w, {3 * e, e}) && denseFloat(w.qkv_b, {3 * e}) &&
                      denseFloat(w.proj_w, {e, e}) && denseFloat(w.proj_b, {e}) && denseFloat(w.norm1_w, {e}) &&
                      denseFloat(w.norm1_b, {e}) && denseFloat(w.norm2_w, {e}) && denseFloat(w.norm2_b, {e}) &&
                      denseFloat(w.ffn1_w, {ff, e}) && denseFloat(w.ffn1_b, {ff}) && denseFloat(w.ffn2_w, {e, ff}) &&
                      denseFloat(w.ffn2_b, {e});
  if (!shapes) return std::nullopt;
  const std::pair<const at::Tensor*, const at::Tensor*> layers[] = {
      {&w.qkv_w, &w.qkv_b}, {&w.proj_w, &w.proj_b}, {&w.ffn1_w, &w.ffn1_b}, {&w.ffn2_w, &w.ffn2_b}};
  for (const auto& [weight, bias] : layers)
    if (!out::smallGemmServes(weight->t(), *bias)) return std::nullopt;
  PackedEncoderLayer l;
  l.qkv_ = out::packLinear(w.qkv_w.t(), w.qkv_b);
  l.proj_ = out::packLinear(w.proj_w.t(), w.proj_b);
  l.ffn1_ = out::packLinear(w.ffn1_w.t(), w.ffn1_b);
  l.ffn2_ = out::packLinear(w.ffn2_w.t(), w.ffn2_b);
  l.norm1_w_ = w.norm1_w;
  l.norm1_b_ = w.norm1_b;
  l.norm2_w_ = w.norm2_w;
  l.norm2_b_ = w.norm2_b;
  l.e_ = e;
  l.heads_ = heads;
  l.ff_ = ff;
  l.gelu_ = use_gelu;
  l.norm_first_ = norm_first;
  l.eps_ = eps;
  return l;
}

at::Tensor PackedEncoderLayer::run(const at::Tensor& src) const {
  if (src.dim() != 3 || src.scalar_type() != at::kFloat || !out::isDenseCpu(src) || !src.is_contiguous() ||
      src.size(2) != e_ || src.numel() == 0)
    return at::Tensor();
  const int64_t b = src.size(0), s = src.size(1), d = e_ / heads_;
  const int64_t rows = b * s;
  if (!out::smallGemmTakes(rows, e_, 3 * e_) || !out::smallGemmTakes(rows, e_, ff_) ||
      !out::smallGemmTakes(rows, ff_, e_))
    return at::Tensor();
  auto norm = [&](const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias) {
    return at::layer_norm(x, {e_}, w, bias, eps_);
  };
  // ATen's order (transformer_encoder_layer_forward): attention block, residual, norm 1
  // (before the block when norm_first), feed-forward block, residual, norm 2.
  const at::Tensor a = norm_first_ ? norm(src, norm1_w_, norm1_b_) : src;
  const at::Tensor qkv = linear(a, qkv_, b, s);
  auto head_view = [&](int64_t part) { return qkv.narrow(2, part * e_, e_).view({b, s, heads_, d}).transpose(1, 2); };
  const at::Tensor attn = at::scaled_dot_product_attention(head_view(0), head_view(1), head_view(2));
  const at::Tensor merged = attn.transpose(1, 2).contiguous();  // [b, s, heads, d] = [b, s, e]
  at::Tensor x = linear(merged, proj_, b, s);
  x.add_(src);
  if (!norm_first_) x = norm(x, norm1_w_, norm1_b_);
  const at::Tensor f_in = norm_first_ ? norm(x, norm2_w_, norm2_b_) : x;
  at::Tensor hidden = linear(f_in, ffn1_, b, s);
  if (gelu_)
    at::gelu_(hidden);
  else
    at::relu_(hidden);
  at::Tensor y = linear(hidden, ffn2_, b, s);
  y.add_(x);
  return norm_first_ ? y : norm(y, norm2_w_, norm2_b_);
}

}  // namespace brisk::ops_cpu::native
