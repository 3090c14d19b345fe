#pragma once
// Graph matching helpers shared by the recurrent-layer passes (lstm_cell_fusion.cc,
// gru_cell_fusion.cc, rnn_layer_fusion.cc): reading constant arguments, and the parts
// of torch.export's unrolled RNN that the LSTM and the GRU write the same way.
#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "core/graph/graph.h"

namespace brisk::ops_cpu::rnn {

inline bool is(const Node* n, const char* key, size_t inputs) {
  return n && n->key() == key && n->inputs().size() == inputs;
}

inline std::optional<std::vector<int64_t>> constInts(const Value* v) {
  if (!v->isConstant() || !v->constant().isIntList()) return std::nullopt;
  return v->constant().toIntVector();
}

inline std::optional<int64_t> constInt(const Value* v) {
  if (!v->isConstant() || !v->constant().isInt()) return std::nullopt;
  return v->constant().toInt();
}

// An int or float constant equal to 1 (addmm's beta and alpha, add's alpha).
inline bool isOne(const Value* v) { return constantNumber(v) == 1.0; }

inline at::Tensor constTensor(const Value* v) {
  return v->isConstant() && v->constant().isTensor() ? v->constant().toTensor() : at::Tensor();
}

// The input of binary node `n` other than `v` (null when `v` is not one of its first two).
inline Value* other(const Node* n, const Value* v) {
  if (n->input(0) == v) return n->input(1);
  if (n->input(1) == v) return n->input(0);
  return nullptr;
}

// torch.export takes step t's row of the input projection G of all steps as
//   gx = squeeze.dims(slice.Tensor(G, 0, t, t + 1, 1), [0])
// When `gx` is that, read by `user` alone, and both views sit in `user`'s block, returns
// the slice node (its input 0 is G, its start is t): a fused step reads row t of G
// itself and the two views go. Else null.
inline Node* rowSliceOf(const Value* gx, const Node* user) {
  Node* squeeze = gx->producer();
  if (!is(squeeze, "aten::squeeze.dims", 2) || squeeze->owningBlock() != user->owningBlock() ||
      gx->soleUser() != user)
    return nullptr;
  const auto dims = constInts(squeeze->input(1));
  Node* slice = squeeze->input(0)->producer();
  if (!dims || dims->size() != 1 || (*dims)[0] != 0 || !is(slice, "aten::slice.Tensor", 5) ||
      slice->owningBlock() != user->owningBlock() || slice->output(0)->soleUser() != squeeze)
    return nullptr;
  const auto dim = constInt(slice->input(1)), start = constInt(slice->input(2)), end = constInt(slice->input(3));
  if (!dim || *dim != 0 || !start || *start < 0 || !end || *end != *start + 1 || !isOne(slice->input(4)))
    return nullptr;
  return slice;
}

// Runs a step fusion: `match(node)` for every node of every block first, then
// `rewrite(match)` in graph order (a step's state is the previous step's output, which
// the previous rewrite has rewired to its fused node by then: rewrites read their
// inputs from the matched nodes, not from the match). Returns the number of matches.
template <typename MatchFn, typename RewriteFn>
size_t fuseSteps(Graph& g, MatchFn match, RewriteFn rewrite) {
  using M = typename decltype(match(static_cast<Node*>(nullptr)))::value_type;
  std::vector<M> matches;
  for (Block* b : g.allBlocks())
    for (Node* n : b->nodes())
      if (auto m = match(n)) matches.push_back(*m);
  // allBlocks() lists outer blocks first; within a block, nodes are in order, and a
  // step chain never crosses blocks (every pattern node sits in one block).
  for (const M& m : matches) rewrite(g, m);
  return matches.size();
}

}  // namespace brisk::ops_cpu::rnn
