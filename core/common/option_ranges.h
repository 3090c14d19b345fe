#pragma once
// The allowed range of every numeric field of brisk::Options, in one place: Module::load
// checks them (validateOptions), and the CLI flags and Python keywords that set these
// fields use the same ranges, so a value is refused with the same bounds everywhere
// instead of wrapping when narrowed to the field's type or starting 100000 threads.
#include <cstdint>
#include <string>

namespace brisk {

struct Options;

struct IntRange {
  const char* option;  // the Options field (and Python keyword)
  int64_t min;
  int64_t max;
  bool contains(int64_t v) const { return v >= min && v <= max; }
};

// Threads beyond this are never useful on one machine, and pools create them one by one.
inline constexpr int64_t kMaxThreads = 1024;

inline constexpr IntRange kMaxRuntimesRange{"max_runtimes", 0, 65536};
inline constexpr IntRange kRuntimeIdleMsRange{"runtime_idle_ms", 0, 7LL * 24 * 3600 * 1000};  // a week
inline constexpr IntRange kMaxParallelOpsRange{"max_parallel_ops", 1, kMaxThreads};
inline constexpr IntRange kIntraOpThreadsRange{"intra_op_threads", 0, kMaxThreads};
inline constexpr IntRange kInterOpThreadsRange{"inter_op_threads", 0, kMaxThreads};

// "[min, max]".
std::string describeRange(const IntRange& r);

// Throws brisk::Error (naming `model`, the option and its range) for the first numeric
// field outside its range.
void validateOptions(const Options& o, const std::string& model);

}  // namespace brisk
