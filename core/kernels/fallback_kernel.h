#pragma once
// The last resort of kernel choice: the TorchScript operator for the node's schema,
// called boxed through a stack, exactly as the interpreter would call it.
#include <memory>

#include "core/kernels/kernel.h"

namespace brisk {

class Node;

// Null when the JIT has no operator for the node (hand-built nodes, control flow).
std::unique_ptr<Kernel> makeFallbackKernel(const Node& node);

}  // namespace brisk
