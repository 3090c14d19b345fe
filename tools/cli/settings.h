#pragma once
// Process-wide settings of the brisk CLI: logging, thread counts, and the environment a
// benchmark ran under.
#include <string>

namespace brisk::cli {

// glog to stderr; warnings and errors only unless verbose. Safe to call again.
void setupLogging(bool verbose);

// at::set_num_threads(n) (which also sets MKL's thread count). n <= 0: leave it alone.
void setThreads(int n);

struct Settings {
  int at_threads = 0;  // at::get_num_threads(); MKL's GEMMs use the same count
  std::string blas;    // the BLAS libtorch was built with: "MKL" (at::hasMKL()), else "other"
  std::string cpu_capability;  // at::get_cpu_capability(): ATen's CPU kernels (DEFAULT, AVX2, AVX512)
  std::string omp_num_threads, mkl_num_threads, glibc_tunables;  // env or "unset"
};
Settings currentSettings();
// "at::get_num_threads=1 blas=MKL cpu_capability=AVX512 OMP_NUM_THREADS=unset ..."
std::string describeSettings(const Settings& s);
std::string settingsJson(const Settings& s);

std::string envOr(const char* name, const char* fallback = "unset");

}  // namespace brisk::cli
