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
  // a call through ATen's mkldnn op costs about 10 us before any arithmetic (Zen 4: a
  // 20x96 -> 12 linear took 12.9 us there, 2.3 us on brisk's kernels; 20x96 -> 384,
  // 25 vs 18 us; 64x256 -> 512, 158 vs 172 us).
  int64_t min_macs = int64_t{1} << 20;
};

// `nhwc_output`: leave the result in channels-last (NHWC) order, as the next
// convolution wants it; false when a reader needs NCHW (a view, the model's output).
std::unique_ptr<CompiledPartition> compileConv(const FusionChain& chain, const Partition& p, bool nhwc_output);
std::unique_ptr<CompiledPartition> compileLinear(const FusionChain& chain, const Node& delegate_node,
                                                 const LinearOptions& options);

// Index of `v` among the delegate node's inputs; throws when it is not one.
size_t inputIndex(const Node& delegate_node, const Value* v);

}  // namespace brisk::onednn
