#pragma once
// A small command-line flag parser for the brisk CLI: `--name VALUE`, `--name=VALUE`,
// boolean `--name`, repeatable list flags, and positional arguments. Unknown flags and
// malformed values throw UsageError (the CLI prints one line and exits 2).
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace brisk::cli {

// Wrong usage of the command line (exit 2 with a hint to `brisk help`).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FlagParser {
 public:
  // `help` lines are printed by usage(); `metavar` names a flag's value ("N", "FILE").
  void addBool(const std::string& name, bool* target, const std::string& help);
  // Sets *target to `value` when the flag is present (e.g. --no-native -> false).
  void addSwitch(const std::string& name, bool* target, bool value, const std::string& help);
  // Numbers outside [min_value, max_value] are a UsageError naming the range: every
  // numeric flag is bounded (no wrapping when narrowed, no runaway thread counts).
  void addInt(const std::string& name, int64_t* target, const std::string& metavar,
              const std::string& help, int64_t min_value, int64_t max_value);
  void addDouble(const std::string& name, double* target, const std::string& metavar,
                 const std::string& help, double min_value, double max_value);
  // `allow_empty`: "" is a value (an option whose default is ""), not a missing one.
  void addString(const std::string& name, std::string* target, const std::string& metavar,
                 const std::string& help, bool allow_empty = false);
  void addList(const std::string& name, std::vector<std::string>* target, const std::string& metavar,
               const std::string& help);
  // Records which flags were given (by name, without dashes).
  bool given(const std::string& name) const;

  // Parses args (without program name and subcommand); returns the positionals.
  // `--` ends flag parsing. Throws UsageError.
  std::vector<std::string> parse(const std::vector<std::string>& args);

  // One line per flag: "  --name VALUE   help".
  std::string usage() const;

 private:
  struct Flag {
    std::string name;
    std::string metavar;  // "" = takes no value
    std::string help;
    std::function<void(const std::string&)> set;
    std::string range;  // "[min, max]" of numeric flags, shown by usage()
  };
  const Flag* find(const std::string& name) const;
  std::vector<Flag> flags_;
  std::vector<std::string> given_;
};

// Strict number parsing (whole string); throws UsageError naming the flag (and, for
// integers, the allowed range).
int64_t parseInt(const std::string& flag, const std::string& text, int64_t min_value, int64_t max_value);
double parseDouble(const std::string& flag, const std::string& text);

}  // namespace brisk::cli
