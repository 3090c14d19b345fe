#pragma once
// The graph pass ops_cpu.decompose_encoder_layer: spells out
// aten::_transformer_encoder_layer_fwd (nn.TransformerEncoderLayer's inference fast
// path, which TorchScript keeps as one node) as the ordinary aten ops it computes, so
// that the delegate backends claim its linear layers as they do in the layer's
// torch.export form (which is already decomposed).
//
// Why: the fused node's own kernel (native/transformer.cc) runs its four linear layers
// on brisk's packed GEMM only where that is fastest (any row count on AVX2-only CPUs,
// up to 8 rows on AVX-512 ones) and otherwise inside ATen's implementation, on MKL's
// sgemm, which takes its AVX2 path on AMD CPUs. Spelled out, the linear layers go to
// oneDNN's AVX-512 matmul where the onednn delegate claims them (at >= 9 rows; fewer
// rows still run brisk's small GEMM), each fused with its relu / gelu or residual add.
//
// The rewrite mirrors ATen's transformer_encoder_layer_forward
// (aten/src/ATen/native/transformers/transformer.cpp) and the scaled-dot-product path
// of its native_multi_head_attention_cpu, for both norm orders and both activations:
//
//   x    = norm_first ? layer_norm(src, [E], w1, b1, eps) : src
//   qkv  = linear(x, W_qkv, b_qkv)                                    [B, L, 3E]
//   q, k, v = select(permute(unflatten(qkv, -1, [3, H, D]), [2, 0, 3, 1, 4]), 0, i)
//   a    = flatten(transpose(scaled_dot_product_attention(q, k, v), 1, 2), 2, 3)
//   x    = add(linear(a, W_proj, b_proj), src)
//   x    = norm_first ? x : layer_norm(x, [E], w1, b1, eps)
//   f    = linear(relu | gelu(linear(norm_first ? layer_norm(x, [E], w2, b2, eps) : x,
//                 W_1, b_1)), W_2, b_2)
//   out  = norm_first ? add(f, x) : layer_norm(add(f, x), [E], w2, b2, eps)
//
// Every size comes from the input at run time (unflatten / flatten, no batch or
// sequence length in the graph), so one graph serves every shape. Results match ATen's
// within fp32 rounding (a different GEMM, and attention through SDPA where ATen's MHA
// takes its math path for head sizes that are not multiples of 8).
//
// What is rewritten: a node whose embed_dim, num_heads, use_gelu, norm_first and eps are
// constants and whose twelve weights and biases are constant dense fp32 tensors of the
// layer's shapes. Its mask must be None, as a constant or at run time: a mask computed
// at run time (nn.TransformerEncoder passes None when the caller gives none) keeps the
// fused node as the other branch of a prim::If on
//   mask is None and not src.is_nested and src.dim() == 3
// which also keeps nested-tensor inputs (an encoder with enable_nested_tensor and a
// padding mask passes one with mask None) and ATen's own errors for other ranks on the
// fused kernel. An empty input takes the decomposed branch too and yields the empty
// result ATen's early return gives. A constant mask is left alone.
#include <cstddef>

#include "core/graph/graph_pass.h"
#include "core/kernels/plugin.h"

namespace brisk::ops_cpu {

// Attribute set on the fused node kept for the other branch: that branch runs with a
// mask (or a nested / non-3-d input), which the packed GEMM never serves, so its kernel
// need not pack the weights (native/transformer.cc).
inline constexpr const char* kEncoderLayerMaskedBranch = "ops_cpu.masked_branch";

// Returns the number of encoder layers rewritten.
size_t decomposeEncoderLayers(Graph& g, const PassContext& ctx);

void registerEncoderLayerDecompose(PluginRegistrar& r);

}  // namespace brisk::ops_cpu
