#include "tools/cli/timing.h"

#include <chrono>

namespace brisk::cli {

double nowSeconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

}  // namespace brisk::cli
