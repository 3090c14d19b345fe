#pragma once
// Names the fuzz case that crashes or hangs, so a failure points at a reproducible case
// rather than at "the test timed out" or a bare SIGSEGV:
//   - a watchdog thread aborts the process with the case's name once a case has run
//     longer than the limit (a hang is a failing case, not a test timeout);
//   - fatal signals (SIGSEGV, SIGABRT, ...) print the case's name first, then go on to the
//     handler that was there before (the sanitizer's report, or the default core dump).
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace brisk::fuzz {

class CaseGuard {
 public:
  explicit CaseGuard(std::chrono::seconds limit);
  ~CaseGuard();
  CaseGuard(const CaseGuard&) = delete;
  CaseGuard& operator=(const CaseGuard&) = delete;

  void begin(const std::string& case_name);  // starts the clock for this case
  void end();

 private:
  void watch();

  std::chrono::seconds limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string name_;
  std::chrono::steady_clock::time_point deadline_;
  bool active_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace brisk::fuzz
