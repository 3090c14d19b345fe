#pragma once
// The TorchScript frontend: file (or IR text) -> brisk Graph + Signature.
//
//   torch::jit::load -> eval -> torch::jit::freeze -> clean-up passes -> conversion
//
// The JIT graph is kept alive only because the fallback kernel asks the JIT for each
// node's Operation at load; nothing on the hot path touches it.
#include <memory>
#include <string>

#include "core/frontend/frontend_result.h"
#include "core/frontend/weights.h"

namespace brisk {

struct Options;

// Throws brisk::Error naming the file: missing, not a TorchScript archive, corrupt or
// truncated, no forward method. `replacements` (checked by checkReplacements) take
// the place of the named parameters and buffers before freezing.
FrontendResult loadTorchScript(const std::string& path, const Options& options,
                               const WeightMap& replacements);
FrontendResult loadTorchScript(const std::string& path, const Options& options);

// The named parameters and buffers of a TorchScript file, for swapping them into a
// Module loaded from another file of the same model.
WeightMap readTorchScriptWeights(const std::string& path);

// Parses IR text ("graph(%x : Tensor): ...") and runs the same clean-up passes.
FrontendResult parseTorchScriptIR(const std::string& ir, const std::string& name);

}  // namespace brisk
