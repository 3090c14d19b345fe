#pragma once
// The last resort of kernel choice: the TorchScript operator for the node's schema,
// called boxed through a stack, exactly as the interpreter would call it. Nodes with a
// schema but no TorchScript node (PT2 programs) call the c10 operator boxed through
// the dispatcher, or the JIT registry's operator for ops only the JIT has.
#include <memory>

#include "core/kernels/kernel.h"

namespace brisk {

class Node;

// Null when no operator serves the node (hand-built nodes without a schema, control flow).
std::unique_ptr<Kernel> makeFallbackKernel(const Node& node);

}  // namespace brisk
