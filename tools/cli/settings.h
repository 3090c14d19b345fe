#pragma once
// Process-wide settings of the brisk CLI: logging, thread counts, and the environment a
// benchmark ran under.
#include <string>

namespace brisk::cli {

// glog to stderr; warnings and errors only unless verbose. Safe to call again.
void setupLogging(bool verbose);

// at::set_num_threads(n), and openblas_set_num_threads(n) when OpenBLAS is loaded (its
// pthread build ignores at::set_num_threads). n <= 0: leave both alone.
void setThreads(int n);

struct Settings {
  int at_threads = 0;       // at::get_num_threads()
  int openblas_threads = -1;  // openblas_get_num_threads(), -1 when not loaded
  std::string omp_num_threads, openblas_num_threads, openblas_coretype, glibc_tunables;  // env or "unset"
};
Settings currentSettings();
// "at::get_num_threads=1 openblas_threads=1 OMP_NUM_THREADS=unset ..."
std::string describeSettings(const Settings& s);
std::string settingsJson(const Settings& s);

std::string envOr(const char* name, const char* fallback = "unset");

}  // namespace brisk::cli
