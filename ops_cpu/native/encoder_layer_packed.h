#pragma once
// aten::_transformer_encoder_layer_fwd (nn.TransformerEncoderLayer's inference fast
// path) with its four linear layers on brisk's packed GEMM (simd/small_gemm.h) instead
// of the MKL calls ATen's implementation makes, on weights packed once at load. The
// rest is ATen's: scaled_dot_product_attention, layer_norm, relu/gelu, the residual
// adds, in ATen's order. Results differ from ATen's in the last bits (the GEMM's fixed
// order of operations), as every linear layer does with ops_cpu.small_gemm on; with it
// off the kernel is ATen's own call (transformer.cc).
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

#include "ops_cpu/out_variant/linear_gemm.h"

namespace brisk::ops_cpu::native {

struct EncoderLayerWeights {
  at::Tensor qkv_w, qkv_b, proj_w, proj_b, norm1_w, norm1_b, norm2_w, norm2_b, ffn1_w, ffn1_b, ffn2_w, ffn2_b;
};

class PackedEncoderLayer {
 public:
  // Null when a weight is not a dense fp32 tensor of the layer's shape, or the packed
  // kernel does not run on this CPU.
  static std::optional<PackedEncoderLayer> make(const EncoderLayerWeights& w, int64_t embed_dim, int64_t heads,
                                                bool use_gelu, bool norm_first, double eps);
  // The layer's output for `src`; undefined (nothing computed) when src is not a dense
  // contiguous fp32 CPU tensor [batch, seq, embed_dim] with at least one token, or a
  // row count the packed GEMM does not take (linear_gemm.h).
  at::Tensor run(const at::Tensor& src) const;

 private:
  PackedEncoderLayer() = default;
  out::PackedLinear qkv_, proj_, ffn1_, ffn2_;
  at::Tensor norm1_w_, norm1_b_, norm2_w_, norm2_b_;
  int64_t e_ = 0, heads_ = 0, ff_ = 0;
  bool gelu_ = false, norm_first_ = false;
  double eps_ = 0;
};

}  // namespace brisk::ops_cpu::native
