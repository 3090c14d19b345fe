#pragma once
// The graph pass ops_cpu.fuse_pointwise: groups connected elementwise nodes of one block
// (arithmetic, comparisons, where, clamp, activations: the op table of
// pointwise_ops.cc) into one ops_cpu::fused_pointwise node (fused_pointwise.h).
//
// Runs after delegate partitioning (order kPassOrderPartition + 50): a node a delegate
// backend claimed is inside a brisk::delegate node by then and stays there (the pass does
// not enter partitions' blocks).
//
// Rules, each for a reason:
//  * at least two nodes per group: one node gains nothing;
//  * a node reading the result of a convolution, linear layer, matmul or batch norm (or
//    of a node excluded by this rule) is not fused: those chains are delegate post-ops
//    (conv + add + relu in resnet18), and when no backend took them (no delegates, a
//    shape the backend declined) they stay the nodes the backend would see next time;
//  * an in-place op joins only when the tensor it writes is made inside the group and read
//    by nothing else, so no one can observe the write (it then computes like its
//    out-of-place twin);
//  * a group is convex (no path leaves it and comes back) and compiles under the dtype
//    rules of pointwise_compiler.h; a group that does not is split or left alone.
// The pass does nothing under fallback_only or without out-variant kernels (the fused
// node has no other kernel).
// Every value of the group read outside it (including graph outputs) is an output of the
// fused node; the others vanish.
#include <cstddef>

#include "core/graph/graph_pass.h"
#include "core/kernels/plugin.h"

namespace brisk::ops_cpu {

// Returns the number of nodes fused away.
size_t fusePointwise(Graph& g, const PassContext& ctx);

void registerElementwiseFusion(PluginRegistrar& r);

}  // namespace brisk::ops_cpu
