#include "tools/cli/format.h"

#include <cstdio>

namespace brisk::cli {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string padRight(const std::string& s, size_t width) {
  return s.size() > width ? s + " " : s + std::string(width - s.size(), ' ');
}

std::string padLeft(const std::string& s, size_t width) {
  return s.size() > width ? " " + s : std::string(width - s.size(), ' ') + s;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

}  // namespace brisk::cli
