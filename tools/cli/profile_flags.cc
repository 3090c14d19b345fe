#include "tools/cli/profile_flags.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "core/report/profile_report.h"
#include "tools/cli/flags.h"
#include "tools/cli/model_locator.h"

namespace brisk::cli {

using report::ProfileReport;
using report::printProfile;
using report::profileJson;
using report::profileModule;

void ProfileFlags::addTo(FlagParser& p) {
  p.addBool("profile", &profile,
            "after timing, profile brisk per node: time per node and per op (kernel kind, provider) and the "
            "framework overhead per node");
  p.addString("trace", &trace, "FILE", "with --profile: write one run as Chrome-trace JSON (Perfetto) to FILE");
  p.addInt("top", &top, "N", "with --profile: rows per table (default 15)", 1, 100000);
  p.addInt("profile-runs", &profile_runs, "N", "with --profile: profiled runs (default: auto, >= 5 and >= 200 ms)", 1,
           100000000);
}

std::string runProfile(const ProfileFlags& flags, const Module& module, const ModelInputs& inputs,
                       double unprofiled_p50_us, std::ostream& os) {
  int64_t runs = flags.profile_runs;
  if (runs <= 0) {
    // Enough runs for stable sums (~200 ms of work), never fewer than 5 nor absurdly many.
    const double est = std::max(unprofiled_p50_us, 1.0);
    runs = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(200e3 / est)), 5, 2000);
  }
  const std::string trace = flags.trace.empty() ? "" : userPath(flags.trace);
  os << "\n";
  const ProfileReport report = profileModule(module, inputs, runs, unprofiled_p50_us, trace);
  printProfile(os, report, static_cast<size_t>(flags.top));
  return profileJson(report, static_cast<size_t>(flags.top));
}

}  // namespace brisk::cli
