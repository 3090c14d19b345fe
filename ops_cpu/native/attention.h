#pragma once
// aten::scaled_dot_product_attention on brisk's own kernel (simd/attention.h) where it
// applies: fp32 query / key / value of rank 3 or 4 with the same leading sizes (no
// broadcasting, no grouped-query attention), each row contiguous; attn_mask None,
// dropout_p 0 and enable_gqa false as constants; is_causal and scale constants; at most
// kMaxScores scores per head (the score matrix is held whole). The heads run in
// parallel over the intra-op threads, each on its own thread's scratch (grown once,
// then reused: no allocation in steady state besides the result).
//
// With Options::precision asking for bf16 (the mode in which the onednn delegate runs
// the linear layers in bf16) the products are bf16 with fp32 accumulation, on CPUs with
// AVX512_BF16; otherwise fp32.
//
// The result is laid out as ATen's CPU kernel lays it out, [B, L, H, Dv] in memory
// seen as [B, H, L, Dv], so the usual transpose(1, 2) + reshape after attention stays a
// view. Anything else (another dtype, a mask, other layouts, CPUs without AVX-512)
// takes at::scaled_dot_product_attention, as before.
#include <cstdint>
#include <memory>

#include "core/kernels/kernel_registry.h"

namespace brisk::ops_cpu::native {

constexpr int64_t kMaxScores = int64_t{1} << 20;

// The factory of aten::scaled_dot_product_attention's kernel.
std::unique_ptr<Kernel> scaledDotProductAttention(KernelBuildContext& b);

}  // namespace brisk::ops_cpu::native
