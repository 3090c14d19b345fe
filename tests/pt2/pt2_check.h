#pragma once
// Helpers shared by the PT2 frontend tests: the programs export_programs.py and
// export_while_loops.py write into the test's runfiles, checked against ep.module().
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "core/common/options.h"

namespace brisk::pt2_testing {

// Runfiles path of a file the export scripts wrote ("mlp.pt2" -> .../tests/pt2/mlp.pt2).
std::string program(const std::string& file);
c10::IValue loadPickle(const std::string& path);
Options withProgram(const std::string& name);

// Runs `archive` three times on `name`.inputs.pt against ep.module()'s outputs
// (`name`.expected.pt), checking the inputs stay unchanged.
void expectMatchesExport(const std::string& archive, const std::string& name, const Options& options);

// Loading `file` throws brisk::Error whose message contains every one of `parts`.
void expectLoadError(const std::string& file, const Options& options, const std::vector<std::string>& parts);

}  // namespace brisk::pt2_testing
