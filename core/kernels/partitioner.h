#pragma once
// The delegate partitioner: core's graph pass "partition_delegates"
// (kPassOrderPartition, after the plugins' fusions and before the late clean-up).
//
// For each backend named in Options::delegates, in that order, and for each block of
// the graph (nested blocks too), the backend claims groups of the block's nodes
// (DelegateBackend::claim). Core checks every group before accepting it:
//   - its nodes belong to this block and have no blocks of their own;
//   - no node has effects (core/graph/effects.h);
//   - no node was claimed already, by this backend or an earlier one (no overlap);
//   - it is convex: no path leaves the group and comes back (Block::wrapProblem).
// An accepted group becomes one `brisk::delegate` node (Block::wrapNodes) with the
// attribute "backend"; a refused group stays as it was, with one warning naming the
// backend, the nodes and the reason. Compiling happens later, when kernels are chosen
// (delegate_kernel.cc), so a swapWeights recompiles.
#include <cstddef>

namespace brisk {

class Graph;
struct PassContext;
struct Registries;
class DelegateRegistry;

// The pass body; returns how many partitions it made.
size_t partitionDelegates(Graph& graph, const PassContext& ctx, const DelegateRegistry& delegates);

// Registers the pass on `registries` (done by Registries' constructor).
void addPartitionPass(Registries& registries);

}  // namespace brisk
