#pragma once
// The whole `bench --memory` section: `flags.memory_runs` probe processes per executor
// (brisk, the interpreter unless `with_interpreter` is false (a PT2 archive without a
// TorchScript twin), and brisk without planning when flags.compare_planning; see
// memory_probe.h for what one process measures) in rotating order; prints the table of
// medians to `out` and returns it as a JSON object.
#include <iosfwd>
#include <string>
#include <vector>

#include "tools/cli/memory_probe.h"

namespace brisk::cli {

std::string runMemoryComparison(const MemoryBenchFlags& flags, const std::vector<std::string>& bench_args,
                                bool with_interpreter, std::ostream& out);

}  // namespace brisk::cli
