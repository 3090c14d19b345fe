#pragma once
// Folds the attribute reads that torch's freezing left in a frozen forward graph.
//
// jit::freeze turns module attributes into constants, but it can leave some reads in
// place: torch 2.x keeps the `in_proj_weight`/`in_proj_bias` reads of a scripted
// nn.MultiheadAttention (an Optional[Tensor] parameter refined by `is None` checks),
// although nothing writes them. brisk runs a graph without its module object, so each
// remaining `self.a.b...` chain is replaced by the attribute's value as a constant —
// exactly what freezing does — when that is provably the same program:
//   - no prim::SetAttr anywhere in the graph (attributes are never reassigned);
//   - alias analysis finds no writer of the value read;
//   - module objects are only read through (no other use of them);
//   - the value can be a graph constant.
// Otherwise nothing is changed, and the caller's check that `self` is unused reports it.
#include <memory>

namespace torch::jit {
struct Graph;
struct Module;
}  // namespace torch::jit

namespace brisk {

// `self` is the graph's first input; a graph that does not use it is left as it is.
void foldRemainingAttributes(const torch::jit::Module& frozen, const std::shared_ptr<torch::jit::Graph>& graph);

}  // namespace brisk
