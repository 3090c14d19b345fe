#pragma once
// Text formatting of the reports' lines and tables (fixed-point numbers, padded table
// cells), shared by the profile report and the brisk CLI's own tables. Plain C++.
#include <cstddef>
#include <string>

namespace brisk::report {

// Fixed-point formatting with `digits` decimals ("%.*f").
std::string fixed(double v, int digits);

// Table cells: `s` padded with spaces to `width`, left- or right-aligned. A cell wider
// than its column keeps one space of separation, so neighbouring columns never run
// together (a huge latency, a long op name).
std::string padRight(const std::string& s, size_t width);
std::string padLeft(const std::string& s, size_t width);

}  // namespace brisk::report
