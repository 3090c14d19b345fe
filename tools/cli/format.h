#pragma once
// Text formatting that only the brisk CLI needs. Numbers and table cells are
// core/report/format.h, shared with the reports the Python binding shows.
#include <string>
#include <vector>

namespace brisk::cli {

// "a, b, c" style lists.
std::string join(const std::vector<std::string>& items, const std::string& separator);

}  // namespace brisk::cli
