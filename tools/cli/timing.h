#pragma once
// The monotonic clock the brisk CLI times loads and single runs with (steady clock, so
// a clock adjustment cannot produce negative or inflated times). Timing repeated calls
// is core/report/timing.h, shared with the reports.
namespace brisk::cli {

// Monotonic clock in seconds.
double nowSeconds();

}  // namespace brisk::cli
