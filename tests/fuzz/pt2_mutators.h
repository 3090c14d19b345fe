#pragma once
// Structure-aware mutations of a torch.export PT2 archive (archive_format "pt2"): its
// program JSON (models/<name>.json), its weights/constants configs, its weight records
// and its members. Deterministic like mutators.h: case N of a seed is always one file.
#include <string>

#include "tests/fuzz/mutators.h"

namespace brisk::fuzz {

Mutation mutatePt2Archive(const std::string& seed, Rng& rng);

// One mutation of a JSON document's text (exposed for the mutators' own tests).
std::string mutateJson(const std::string& text, Rng& rng, std::string& what);

}  // namespace brisk::fuzz
