#pragma once
// Scaled dot-product attention of one head, softmax(q k^T * scale) v, for the short
// sequences of inference-time encoder layers (transformer at 64 tokens, BERT-like and
// ViT blocks): the whole score matrix fits in cache, so it is computed in one piece
// (no online-softmax tiling as in flash attention) by two register-tiled GEMMs on
// operands packed into a scratch buffer, with an exact softmax between them.
//
// Why: ATen's CPU path (flash attention, also for these short sequences) took 72 us for
// 4 heads of 64x64 on one Zen 4 core, about twice the arithmetic's time, and in bf16 it
// is slower still (86 us). Here fp32 runs AVX-512F FMAs; bf16 runs AVX512_BF16 dot
// products (vdpbf16ps: q, k, the probabilities and v rounded to bf16 to nearest even,
// products summed in fp32), twice the fp32 rate. The softmax is fp32 in both.
//
// Numerics: fp32 agrees with ATen to rounding (another summation order and brisk's
// Cephes-style exp, vec_math.inc); bf16 carries bf16's input rounding (relative error
// about 2^-8 per operand).
//
// No torch: plain pointers, so tests call it directly. Callers check attentionRuns()
// first (AVX-512F; and AVX512_BF16 for bf16).
#include <cstddef>
#include <cstdint>

namespace brisk::ops_cpu::out {

enum class AttentionMath { kFp32, kBf16 };

struct AttentionDims {
  int64_t l = 0;   // query rows
  int64_t s = 0;   // key / value rows
  int64_t d = 0;   // query / key width
  int64_t dv = 0;  // value / output width
};

// Whether this CPU runs the kernel in `math`.
bool attentionRuns(AttentionMath math);

// Bytes of scratch one head needs (attentionHead's `scratch`, 64-byte aligned).
size_t attentionScratchBytes(const AttentionDims& dims, AttentionMath math);

// out[i, :dv] = sum_j p[i, j] v[j, :dv], p = softmax over j of scale * q[i, :] . k[j, :],
// with p[i, j] = 0 for j > i when `causal` (ATen's is_causal: the top-left triangle).
// Rows of q, k, v and out are `ld*` floats apart, each row's elements contiguous;
// out must not overlap the inputs. dims all >= 1.
void attentionHead(const AttentionDims& dims, const float* q, int64_t ldq, const float* k, int64_t ldk,
                   const float* v, int64_t ldv, float* out, int64_t ldo, float scale, bool causal,
                   AttentionMath math, void* scratch);

}  // namespace brisk::ops_cpu::out
