#pragma once
// `brisk bench --profile [--trace FILE] [--top N] [--profile-runs N]`: after the timed
// rounds, a per-node profile of brisk (core/report/profile_report.h).
#include <cstdint>
#include <iosfwd>
#include <string>

#include "core/frontend/model_inputs.h"

namespace brisk {
class Module;
}

namespace brisk::cli {

class FlagParser;

struct ProfileFlags {
  bool profile = false;       // --profile
  std::string trace;          // --trace FILE (implies --profile)
  int64_t top = 15;           // --top N rows per table
  int64_t profile_runs = 0;   // --profile-runs N (0 = auto: >= 5 runs and >= 200 ms)

  void addTo(FlagParser& p);
  bool enabled() const { return profile || !trace.empty(); }
};

// Profiles `module` on `inputs`, prints the tables to `os` and returns them as JSON (for
// `bench --json`). `unprofiled_p50_us`: brisk's p50 from the timed rounds.
std::string runProfile(const ProfileFlags& flags, const Module& module, const ModelInputs& inputs,
                       double unprofiled_p50_us, std::ostream& os);

}  // namespace brisk::cli
