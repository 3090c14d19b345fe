#include "tools/cli/format.h"

#include <cstddef>

namespace brisk::cli {

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

}  // namespace brisk::cli
