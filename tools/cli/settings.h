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
  std::string openblas_core = "n/a";  // openblas_get_corename(): the kernels OpenBLAS chose
};
Settings currentSettings();
// "at::get_num_threads=1 openblas_threads=1 OMP_NUM_THREADS=unset ..."
std::string describeSettings(const Settings& s);
std::string settingsJson(const Settings& s);

std::string envOr(const char* name, const char* fallback = "unset");

// A one-line note when OpenBLAS runs its generic Prescott (SSE3) kernels on a CPU with
// AVX2 or AVX-512 (OpenBLAS 0.3.21 falls back to them on CPUs newer than it knows, e.g.
// Sapphire Rapids; sgemm is then several times slower), naming the OPENBLAS_CORETYPE
// that selects the matching kernels; "" otherwise. OpenBLAS reads the variable when it
// is loaded, so only the user's environment can set it.
std::string openBlasCoreNote(const Settings& s);

}  // namespace brisk::cli
