#pragma once
// The one door into brisk's frontends: which reader a model file gets is decided here,
// by the file's content (a PT2 archive is a zip like a TorchScript one, and either may
// have any name), so that the executor never names a frontend. No torch headers.
#include <cstdint>
#include <string>

#include "core/frontend/frontend_result.h"
#include "core/frontend/weights.h"

namespace brisk {

struct Options;

enum class ModelFormat : uint8_t {
  kTorchScript,  // torch.jit.save (core/frontend/torchscript/)
  kPt2,          // torch.export.save / package_pt2 (core/frontend/pt2/)
};

// Anything that is not a PT2 archive is read as TorchScript, whose reader gives the
// error for a file that is neither.
ModelFormat modelFormat(const std::string& path);

// The model's forward as brisk's graph. `replacements` (checked by checkReplacements)
// take the place of the named weights before anything is folded. Throws brisk::Error
// naming the file (and node/op where known).
FrontendResult loadModel(const std::string& path, const Options& options, const WeightMap& replacements);

// The file's named weights, for swapping them into a Module loaded from another file of
// the same model (a PT2 archive: of the program Options::pt2_program chooses).
WeightMap readModelWeights(const std::string& path, const Options& options);

// The program of a NativeRT archive that runs regions compiled by AOTInductor, or ""
// (any other file). Throws brisk::Error for an unreadable PT2 archive.
std::string compiledRegionsProgram(const std::string& path);

}  // namespace brisk
