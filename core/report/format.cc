#include "core/report/format.h"

#include <cstdio>

namespace brisk::report {

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

}  // namespace brisk::report
