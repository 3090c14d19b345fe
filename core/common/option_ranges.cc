#include "core/common/option_ranges.h"

#include "core/common/error.h"
#include "core/common/option_table.h"

namespace brisk {

void validateOptions(const Options& o, const std::string& model) {
  for (const OptionSpec& spec : optionTable()) {
    if (spec.type() != OptionType::kInt) continue;
    const int64_t value = std::get<int64_t>(getOption(o, spec));
    if (value < spec.min || value > spec.max)
      throw Error(Error::Where{model, "", ""}, outOfRange(spec, std::to_string(value)));
  }
}

}  // namespace brisk
