#pragma once
// The PT2 frontend: a torch.export archive (torch.export.save / package_pt2) -> brisk
// Graph + Signature. The program is chosen by Options::pt2_program. No torch headers
// here: the frontend chooser (core/frontend/frontend.h) includes this.
#include <string>

#include "core/frontend/frontend_result.h"
#include "core/frontend/weights.h"

namespace brisk {

struct Options;

// A zip whose archive_format record is "pt2" (see pt2/archive.h), whatever its name.
bool isPt2Archive(const std::string& path);

// Throws brisk::Error naming the file (and node/op where known): corrupt or truncated
// archive, unknown schema version, unknown program, unsupported or unknown operator,
// mutated buffers, CUDA programs.
// `replacements` (checked by checkReplacements) take the place of the program's named
// parameters, buffers and constants before any of them is folded.
FrontendResult loadPt2(const std::string& path, const Options& options);
FrontendResult loadPt2(const std::string& path, const Options& options, const WeightMap& replacements);

// The first program (by name) of a NativeRT archive that runs regions compiled by
// AOTInductor (package_nativert_with_aoti_delegate's "<model>-<backend id>"), or "" when
// the archive has none. Throws as loadPt2 does for an unreadable archive.
std::string pt2DelegateProgram(const std::string& path);

// The named parameters, buffers and constants of the program Options::pt2_program
// chooses, for swapping them into a Module loaded from another file of the same model.
WeightMap readPt2Weights(const std::string& path, const Options& options);

}  // namespace brisk
