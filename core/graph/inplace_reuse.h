#pragma once
// In-place reuse: an elementwise node (relu, hardtanh, add, ...) whose input tensor is
// read by nothing else and aliased by nothing may write its result into that input's
// memory, as the model's own `relu_`/`add_` did before freezing made them functional.
// Fewer tensors are live at once (smaller slab, lower peak RSS) and the next kernel
// reads data that is still in cache.
//
// The pass only annotates (Node::setReusableInput); the kernel decides per run whether
// the result fits the input (same dtype and shape, dense) and otherwise writes a fresh
// tensor. Escape analysis and the memory planner treat the annotated input like a view
// source of the output, so its lifetime covers the output's readers.
//
// Eval-mode dropout (train a constant false) is marked too: ATen returns its input
// itself, and the mark is what tells escape analysis and the planner about that alias
// (its kernel then hands the input on instead of copying it).
namespace brisk {

class Graph;

// Annotates every qualifying node of `graph`, its sub-blocks and fork subgraphs.
// Returns the number of nodes annotated.
int markInPlaceReuse(Graph& graph);

}  // namespace brisk
