#pragma once
// Which constants a delegate partition may free the bytes of. A backend that keeps its
// own packed copy of a weight (delegates/onednn) would otherwise hold the model's
// weights twice: the dense tensor stays in the graph for the partition's nested block.
//
// A constant qualifies for the brisk::delegate node whose nested block reads it when
// nothing else in the model can read its bytes:
//   - every read of the value is inside that nested block (no node outside, no block
//     return);
//   - it is a whole, contiguous tensor (storage offset 0, storage no larger than the
//     tensor), so its bytes are exactly what a dense copy restores;
//   - no other constant of the graph, or of any fork subgraph, shares its storage.
// The frontends' own objects (the JIT graph a fallback Operation was made from, the
// frozen TorchScript module) may still point at the storage, but never read it at run
// time: kernels read constants through brisk's value slots only.
//
// Such bytes are read only when the partition's run() returns false and core runs the
// nested block; the contract for a backend that frees them is in delegate.h
// (Partition::releasable).
#include <vector>

namespace brisk {

class Graph;
class Node;
class Value;

// Records, on every delegate node of `root` (and of its fork subgraphs), the constants
// that qualify as the node attribute kReleasableAttr (their value ids). Run on the
// model's root graph after every load-time pass, before kernels are chosen.
void markReleasableConstants(Graph& root);

// The constants markReleasableConstants recorded on delegate node `n` (empty when none).
std::vector<const Value*> releasableConstants(const Node& n);

}  // namespace brisk
