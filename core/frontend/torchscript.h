#pragma once
// The TorchScript frontend: file (or IR text) -> brisk Graph + Signature.
//
//   torch::jit::load -> eval -> torch::jit::freeze -> clean-up passes -> conversion
//
// The JIT graph is kept alive only because the fallback kernel asks the JIT for each
// node's Operation at load; nothing on the hot path touches it.
#include <memory>
#include <string>

#include "core/graph/signature.h"

namespace brisk {

class Graph;
struct Options;

struct FrontendResult {
  std::shared_ptr<Graph> graph;
  Signature signature;
  std::shared_ptr<void> keepalive;  // owns the torch::jit::Graph (and Module)
};

// Throws brisk::Error naming the file: missing, not a TorchScript archive, corrupt or
// truncated, no forward method.
FrontendResult loadTorchScript(const std::string& path, const Options& options);

// Parses IR text ("graph(%x : Tensor): ...") and runs the same clean-up passes.
FrontendResult parseTorchScriptIR(const std::string& ir, const std::string& name);

}  // namespace brisk
