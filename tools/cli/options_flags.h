#pragma once
// Command-line flags for every brisk::Options field (and the CLI-wide --verbose), shared
// by all subcommands. The flags are generated from the option table
// (core/common/option_table.h): spelling, value name, range and help come from there.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/common/options.h"
#include "tools/cli/flags.h"

namespace brisk::cli {

struct CommonFlags {
  // What the generated flags set directly (bools, strings, lists).
  Options parsed;
  // Integer flags, INT64_MIN until given: the option keeps its default.
  std::map<std::string, int64_t> ints;
  // Flags whose meaning differs from "set the field":
  std::vector<std::string> plugins;  // --plugin (added to the defaults)
  std::vector<std::string> delegates;  // --delegate (replaces the default list)
  bool no_default_plugins = false;   // --no-default-plugins: load none of the defaults
  std::vector<std::string> plugin_option_args;  // --plugin-option PLUGIN.NAME=VALUE
  // CLI-wide
  // --threads: -1 when not given (the command's default: bench 1, others libtorch's);
  // 0 = no preference (libtorch's), as in Options::intra_op_threads.
  int64_t threads = -1;
  bool verbose = false;

  // Registers the flags above on `parser`.
  void addTo(FlagParser& parser);
  // The Options the flags describe (defaults for anything not given). Throws UsageError
  // for a malformed --plugin-option.
  Options options() const;
};

// One line: "plugins=[ops_cpu] optimize_numerics=true ..." (every field).
std::string describeOptions(const Options& o);
// Same fields as a JSON object.
std::string optionsJson(const Options& o);

}  // namespace brisk::cli
