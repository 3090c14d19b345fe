#include "core/common/option_ranges.h"

#include "core/common/error.h"
#include "core/common/options.h"

namespace brisk {

std::string describeRange(const IntRange& r) {
  return "[" + std::to_string(r.min) + ", " + std::to_string(r.max) + "]";
}

void validateOptions(const Options& o, const std::string& model) {
  // Fields are compared as int64_t: max_runtimes (size_t) above INT64_MAX reads as
  // negative, which is out of range too.
  const std::pair<const IntRange&, int64_t> fields[] = {
      {kMaxRuntimesRange, static_cast<int64_t>(o.max_runtimes)},
      {kRuntimeIdleMsRange, o.runtime_idle_ms},
      {kMaxParallelOpsRange, o.max_parallel_ops},
      {kIntraOpThreadsRange, o.intra_op_threads},
      {kInterOpThreadsRange, o.inter_op_threads},
  };
  for (const auto& [range, value] : fields)
    if (!range.contains(value))
      throw Error(Error::Where{model, "", ""}, std::string("option ") + range.option + " must be in " +
                                                   describeRange(range) + ", got " + std::to_string(value));
}

}  // namespace brisk
