#include "tests/fuzz/case_guard.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace brisk::fuzz {
namespace {

// The current case's name, readable from a signal handler (no allocation there).
char g_case[512];
const int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous[sizeof(kSignals) / sizeof(kSignals[0])];

void onFatalSignal(int sig) {
  static const char prefix[] = "\n*** fatal signal in fuzz case: ";
  (void)!write(STDERR_FILENO, prefix, sizeof(prefix) - 1);
  (void)!write(STDERR_FILENO, g_case, strnlen(g_case, sizeof(g_case)));
  (void)!write(STDERR_FILENO, "\n", 1);
  // Hand over to whoever was there before: on return the faulting instruction runs again
  // (SIGSEGV) or abort() raises again (SIGABRT), now reaching that handler.
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i)
    if (kSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
}

}  // namespace

CaseGuard::CaseGuard(std::chrono::seconds limit) : limit_(limit) {
  // A stack overflow (deep recursion) can only be reported from another stack.
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof(alt_stack);
  sigaltstack(&ss, nullptr);
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
    struct sigaction sa {};
    sa.sa_handler = onFatalSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER | SA_ONSTACK;
    sigaction(kSignals[i], &sa, &g_previous[i]);
  }
  thread_ = std::thread([this] { watch(); });
}

CaseGuard::~CaseGuard() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
}

void CaseGuard::begin(const std::string& case_name) {
  std::lock_guard<std::mutex> lock(mu_);
  name_ = case_name;
  std::snprintf(g_case, sizeof(g_case), "%s", case_name.c_str());
  deadline_ = std::chrono::steady_clock::now() + limit_;
  active_ = true;
  cv_.notify_all();
}

void CaseGuard::end() {
  std::lock_guard<std::mutex> lock(mu_);
  active_ = false;
  g_case[0] = '\0';
  cv_.notify_all();
}

void CaseGuard::watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!active_) {
      cv_.wait(lock);
      continue;
    }
    auto deadline = deadline_;
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && active_ && deadline_ == deadline) {
      std::fprintf(stderr, "\n*** fuzz case hung (still running after %lld s): %s\n",
                   static_cast<long long>(limit_.count()), name_.c_str());
      std::fflush(stderr);
      std::abort();
    }
  }
}

}  // namespace brisk::fuzz
