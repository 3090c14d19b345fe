#pragma once
// The graph pass ops_cpu.fuse_view_chain and the kernel of the node it makes.
//
// A run of >= 2 view ops (slice, select, squeeze, unsqueeze, view, expand, permute,
// transpose) in which each reads the one before and nothing else reads the values in
// between becomes one ops_cpu::view_chain node. Its kernel computes the final sizes,
// strides and storage offset on integers and makes one tensor over the input's storage.
// Every view op costs a TensorImpl (a heap allocation) and a kernel call, and exports
// spell simple reshapes as runs of them: the core ATen IR turns a GRU's h0 into the layer
// input through six.
//
// Only constant arguments are taken (a view size built at run time ends the run). The
// kernel gives ATen's result exactly: the same sizes, strides and offset over the same
// bytes; it falls back to ATen's own ops, in order, for anything its integer rules do not
// cover (a tensor that is not plain strided CPU, a view that would need a copy, an
// argument out of range), so errors are ATen's.
#include <cstddef>

#include "core/graph/graph_pass.h"
#include "core/kernels/plugin.h"

namespace brisk::ops_cpu {

inline constexpr const char* kViewChainKind = "ops_cpu::view_chain";

// Returns the number of view nodes folded into chains.
size_t fuseViewChains(Graph& g, const PassContext& ctx);

void registerViewChain(PluginRegistrar& r);

}  // namespace brisk::ops_cpu
