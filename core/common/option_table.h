#pragma once
// The one declaration of every brisk::Options field: name, the member it maps to, range,
// CLI flag and help text. The default is the field's initializer in options.h (read
// from Options{}), so it is written once too. Everything that lists, sets or shows
// options iterates this table: Module::load's range check (option_ranges.h), the CLI
// flags, `brisk help` and the --json dump (tools/cli/options_flags.cc), brisk.load's
// keywords and docstring (python/py_options.cc), and the README's table, which
// tests/core/option_table_test.cc compares with renderOptionsMarkdown().
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/common/options.h"

namespace brisk {

using PluginOptionMap = std::map<std::string, PluginOptionValue>;

// Names an option takes that a registry of a higher layer defines, by key: "passes"
// (core's graph passes that may be disabled), "required_passes", "planners". Help and
// details texts say "{key}" where the list goes; core/executor/option_names.h collects
// them, so each name is spelled once, where it is registered.
using OptionNameLists = std::map<std::string, std::vector<std::string>>;

enum class OptionType { kBool, kInt, kString, kStringList, kPluginOptions };
const char* optionTypeName(OptionType t);  // "bool", "int", "str", "list of str", ...

// A value for an option by name. Integers of every width travel as int64_t.
using OptionValue = std::variant<bool, int64_t, std::string, std::vector<std::string>, PluginOptionMap>;

struct OptionSpec {
  using Field = std::variant<bool Options::*, int Options::*, int64_t Options::*, size_t Options::*,
                             std::string Options::*, std::vector<std::string> Options::*,
                             PluginOptionMap Options::*>;
  const char* name;  // the Options field, Python keyword and JSON key
  Field field;
  // CLI flag without dashes ("" = none). A bool flag flips the default ("no-native");
  // others take a value named `metavar`.
  const char* flag = "";
  const char* metavar = "";
  // Integers only: the allowed range, the same for the field, the flag and Python.
  int64_t min = 0;
  int64_t max = 0;
  // One line for `brisk help` and the Python docstring.
  const char* help = "";
  // The README's "meaning" column ("" = help).
  const char* details = "";
  // Shown after the default in the README: "0 (unbounded)".
  const char* default_note = "";

  OptionType type() const;
};

// In the order users read them (the README's and `brisk help`'s).
const std::vector<OptionSpec>& optionTable();
// nullptr when there is no such option.
const OptionSpec* findOption(std::string_view name);
// "plugins, default_plugins_optional, ...": for "unknown option" messages.
std::string optionNames();

// "[min, max]".
std::string describeRange(int64_t min, int64_t max);
// The one out-of-range message: "option 'NAME' must be in [min, max], got GOT".
std::string outOfRange(const OptionSpec& spec, const std::string& got);
// spec.help with the "{key}" lists filled in ("a, b").
std::string optionHelp(const OptionSpec& spec, const OptionNameLists& names);
// The README's meaning: spec.details (else help), the lists quoted ("`a`, `b`").
std::string optionDetails(const OptionSpec& spec, const OptionNameLists& names);

OptionValue getOption(const Options& o, const OptionSpec& spec);
// Throws brisk::Error naming the option for a value of another type or out of range.
void setOption(Options& o, const OptionSpec& spec, OptionValue value);
// By name; an unknown name is a brisk::Error listing the options.
void setOption(Options& o, std::string_view name, OptionValue value);

// A value as `brisk inspect` / bench print it: "true", "30000", "[ops_cpu]", "{ops_cpu.small_gemm=false}".
std::string formatOption(const OptionValue& v);

// The README's options table (header included), one row per option.
std::string renderOptionsMarkdown(const OptionNameLists& names);
// "  name (type, default D[, range]): help" per option: the Python docstring.
std::string renderOptionsDoc(const OptionNameLists& names);

}  // namespace brisk
