#include "threading/thread_settings.h"

#include <ATen/Parallel.h>

#include <mutex>
#include <stdexcept>
#include <thread>

namespace brisk::threading {
namespace {

std::mutex g_mu;
ThreadSettings g_applied;    // values applied by brisk (0 = never)
bool g_arena_created = false;

void check(const char* what, int applied, int wanted) {
  if (applied != 0 && wanted != 0 && applied != wanted)
    throw std::invalid_argument(std::string(what) + " threads were already set to " + std::to_string(applied) +
                                " in this process; cannot change them to " + std::to_string(wanted) +
                                " (thread settings apply once per process)");
}

}  // namespace

void applyThreadSettings(const ThreadSettings& s) {
  std::lock_guard<std::mutex> lock(g_mu);
  check("intra-op", g_applied.intra_op, s.intra_op);
  check("inter-op", g_applied.inter_op, s.inter_op);
  if (s.inter_op != 0 && g_applied.inter_op == 0 && g_arena_created)
    throw std::invalid_argument("the inter-op arena already exists; set inter-op threads before the first run");
  if (s.intra_op > 0 && g_applied.intra_op == 0) {
    at::set_num_threads(s.intra_op);
    g_applied.intra_op = s.intra_op;
  }
  if (s.inter_op > 0) g_applied.inter_op = s.inter_op;
}

ThreadSettings currentThreadSettings() {
  std::lock_guard<std::mutex> lock(g_mu);
  ThreadSettings s = g_applied;
  s.intra_op = at::get_num_threads();
  return s;
}

int lockInterOpThreads() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_applied.inter_op == 0) {
    const unsigned hw = std::thread::hardware_concurrency();
    g_applied.inter_op = hw == 0 ? 1 : static_cast<int>(hw);
  }
  g_arena_created = true;
  return g_applied.inter_op;
}

std::string describe(const ThreadSettings& s) {
  auto v = [](int n) { return n == 0 ? std::string("default") : std::to_string(n); };
  return "intra-op " + v(s.intra_op) + ", inter-op " + v(s.inter_op);
}

}  // namespace brisk::threading
