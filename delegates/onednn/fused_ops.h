#pragma once
// The compiled partitions of the onednn backend: one fused oneDNN call per chain
// (fusion_chain.h), with the weight reordered into oneDNN's blocked format (a
// convolution: on the first call with each blocking, packed_weights.h; a linear layer:
// per row count). A swapWeights recompiles, and so re-packs.
#include <memory>

#include "core/kernels/delegate.h"
#include "delegates/onednn/fusion_chain.h"

namespace brisk::onednn {

struct LinearOptions {
  // Inputs with fewer rows than this run the nested block (brisk's kernels: its small
  // GEMM serves up to 8 rows faster than oneDNN's matmul).
  int64_t min_rows = 9;
  // Calls with fewer multiply-adds than this (rows x in x out) run the nested block too:
  // brisk's small kernels win there (Zen 4, one thread: a 20x96 -> 12 linear took
  // 12.9 us on oneDNN, 2.3 on brisk's). Measured with the direct matmul on the zoo:
  // 2^15 gives bert_tiny.pt2 157 -> 120 us and deepandwide at 32 rows 58 -> 55 against
  // 2^20, with lstm_tagger, mlp, dlrm_tiny and the transformer unchanged.
  int64_t min_macs = int64_t{1} << 15;
  // bf16 weights and inputs, fp32 result (Options::precision "bf16", fused_linear.cc).
  bool bf16 = false;
};

struct ConvOptions {
  // Leave the result in channels-last (NHWC) order, as the next convolution wants it;
  // false when a reader needs NCHW (a view, the model's output).
  bool nhwc_output = false;
  // Run in bf16 (Options::precision "bf16"): the source rounded to bf16 per call, the
  // weight packed in bf16 once, fp32 accumulation, bias, residual and result. A weight
  // whose fp32 bytes were freed comes back rounded to bf16 when the nested block runs.
  bool bf16 = false;
  // bf16 mode, between two convolutions: the result is written in bf16 (every reader is
  // a bf16 convolution partition), and the source / the residual operand arrive in bf16
  // from such a partition. The producer and its readers decide it from the same graph
  // (plugin.cc), so the types agree.
  bool bf16_output = false, bf16_input = false, bf16_other = false;
  // The channel block (16 with AVX-512, else 8) of oneDNN's blocked layout nChw{16,8}c,
  // in which a result passes from one convolution partition to the next (as a 5-d
  // tensor [N, ceil(C / block), H, W, block]); 0: such results stay NHWC. The blocked
  // kernels are much faster on memory-bound convolutions (depthwise, few channels). As
  // with bf16, the producer and its readers decide it from the same graph.
  int64_t block = 0;
  bool blocked_output = false, blocked_input = false, blocked_other = false;
  // blocked_other: the residual's channel count (its producer's result), so that one
  // that broadcasts onto the result can be expanded here (the nested block cannot take
  // a blocked operand).
  int64_t other_channels = 0;
  // Compute in the blocked layout though the result leaves for readers outside the
  // backend (the end of a blocked region), converting it on the way out as
  // `nhwc_output` says.
  bool blocked_exit = false;
};
std::unique_ptr<CompiledPartition> compileConv(const FusionChain& chain, const Partition& p, const ConvOptions& o);
std::unique_ptr<CompiledPartition> compileLinear(const FusionChain& chain, const Partition& p,
                                                 const LinearOptions& options);

// Index of `v` among the delegate node's inputs; throws when it is not one.
size_t inputIndex(const Node& delegate_node, const Value* v);

}  // namespace brisk::onednn
