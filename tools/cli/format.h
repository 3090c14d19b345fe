#pragma once
// Text formatting for the brisk CLI's lines and tables. Plain C++ (no torch), so the
// profile report that the Python binding links can use it too.
#include <cstddef>
#include <string>
#include <vector>

namespace brisk::cli {

// Fixed-point formatting with `digits` decimals ("%.*f").
std::string fixed(double v, int digits);

// Table cells: `s` padded with spaces to `width`, left- or right-aligned. A cell wider
// than its column keeps one space of separation, so neighbouring columns never run
// together (a huge latency, a long op name).
std::string padRight(const std::string& s, size_t width);
std::string padLeft(const std::string& s, size_t width);

// "a, b, c" style lists.
std::string join(const std::vector<std::string>& items, const std::string& separator);

}  // namespace brisk::cli
