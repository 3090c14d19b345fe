#pragma once
// Module::load's check of the numeric options. The ranges themselves are declared with
// each option in core/common/option_table.cc, and the CLI flags and Python keywords use
// the same ones, so a value is refused with the same bounds everywhere instead of
// wrapping when narrowed to the field's type or starting 100000 threads.
#include <cstdint>
#include <string>

namespace brisk {

struct Options;

// Threads beyond this are never useful on one machine, and pools create them one by one.
inline constexpr int64_t kMaxThreads = 1024;

// Throws brisk::Error (naming `model`, the option and its range) for the first numeric
// field outside its range.
void validateOptions(const Options& o, const std::string& model);

}  // namespace brisk
