#pragma once
// Eval-mode dropout: `aten::dropout(x, p, train)` with `train` a constant false returns
// `x` itself in ATen (`_dropout`: `if (!train) return input`), though its schema does
// not say so. torch.export keeps these nodes (TorchScript's freeze removes them), and
// one between a linear layer and its residual add keeps the add out of the linear's
// fused call (nn.TransformerEncoderLayer: out_proj -> dropout -> add).
//
// The pass remove_eval_dropout (builtin_passes.h) makes every reader of such a node's
// result read `x` instead and drops the node: the same tensor the kernel would have
// handed on, so results, aliasing and in-place writes are as before.
#include <cstddef>

namespace brisk {

class Graph;
class Node;

// Whether `n` is aten::dropout with `train` a constant false.
bool isEvalDropout(const Node& n);

// Rewires and removes every eval-mode dropout in `graph`'s blocks; returns how many.
size_t removeEvalDropout(Graph& graph);

}  // namespace brisk
