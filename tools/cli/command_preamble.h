#pragma once
// What every command (run, bench, inspect) does before its own work, written once: the
// flags text of its usage, parsing with --help, logging and the intra-op threads.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "tools/cli/flags.h"
#include "tools/cli/options_flags.h"
#include "tools/cli/settings.h"

namespace brisk::cli {

// The usage lines of a command's flags: its own only, or its own and the common ones.
// `Flags` has addOwn(FlagParser&) and addAll(FlagParser&).
template <typename Flags>
std::string flagsUsage(bool common) {
  Flags f;
  FlagParser p;
  if (common)
    f.addAll(p);
  else
    f.addOwn(p);
  return p.usage();
}

// Parses `args` with `parser` (the command's flags already added). With --help, prints
// `usage(true)` and returns nullopt: the command then exits 0.
inline std::optional<std::vector<std::string>> parseOrHelp(FlagParser& parser, const std::vector<std::string>& args,
                                                           const bool& help, std::string (*usage)(bool)) {
  std::vector<std::string> positional = parser.parse(args);
  if (!help) return positional;
  std::cout << usage(true);
  return std::nullopt;
}

// Logging and intra-op threads from the common flags; `unset_threads` when --threads was
// not given (bench: 1, for comparable numbers; the others: libtorch's own, -1).
inline void applyCommonFlags(const CommonFlags& c, int unset_threads) {
  setupLogging(c.verbose);
  setThreads(c.threads < 0 ? unset_threads : static_cast<int>(c.threads));
}

}  // namespace brisk::cli
