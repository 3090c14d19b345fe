#include "tools/cli/settings.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <glog/logging.h>

#include <cstdlib>
#include <sstream>

#include "threading/thread_settings.h"
#include "tools/cli/json.h"

namespace brisk::cli {

void setupLogging(bool verbose) {
  if (!google::IsGoogleLoggingInitialized()) google::InitGoogleLogging("brisk");
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = verbose ? google::GLOG_INFO : google::GLOG_WARNING;
  FLAGS_stderrthreshold = verbose ? google::GLOG_INFO : google::GLOG_WARNING;
}

namespace {
using GetThreadsFn = int (*)();
using GetCoreNameFn = char* (*)();
}  // namespace

void setThreads(int n) {
  if (n <= 0) return;
  threading::ThreadSettings t;
  t.intra_op = n;
  t.openblas = n;
  threading::applyThreadSettings(t);
}

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string(fallback);
}

Settings currentSettings() {
  Settings s;
  s.at_threads = at::get_num_threads();
  if (auto fn = reinterpret_cast<GetThreadsFn>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads")))
    s.openblas_threads = fn();
  s.omp_num_threads = envOr("OMP_NUM_THREADS");
  s.openblas_num_threads = envOr("OPENBLAS_NUM_THREADS");
  s.openblas_coretype = envOr("OPENBLAS_CORETYPE");
  s.glibc_tunables = envOr("GLIBC_TUNABLES");
  if (auto fn = reinterpret_cast<GetCoreNameFn>(::dlsym(RTLD_DEFAULT, "openblas_get_corename")))
    if (const char* name = fn()) s.openblas_core = name;
  return s;
}

std::string openBlasCoreNote(const Settings& s) {
  if (s.openblas_core != "Prescott") return "";
  __builtin_cpu_init();
  const char* better = __builtin_cpu_supports("avx512f") ? "SkylakeX" : __builtin_cpu_supports("avx2") ? "Haswell" : "";
  if (!*better) return "";
  return std::string("note: OpenBLAS runs its generic Prescott (SSE3) kernels on this ") +
         (std::string(better) == "SkylakeX" ? "AVX-512" : "AVX2") +
         " CPU (a CPU it does not know); export OPENBLAS_CORETYPE=" + better +
         " for several times faster sgemm (the interpreter's, and brisk's linear beyond 8 rows)";
}

std::string describeSettings(const Settings& s) {
  std::ostringstream os;
  os << "at::get_num_threads=" << s.at_threads
     << " openblas_threads=" << (s.openblas_threads < 0 ? std::string("n/a") : std::to_string(s.openblas_threads))
     << " OMP_NUM_THREADS=" << s.omp_num_threads << " OPENBLAS_NUM_THREADS=" << s.openblas_num_threads
     << " OPENBLAS_CORETYPE=" << s.openblas_coretype << " openblas_core=" << s.openblas_core
     << " GLIBC_TUNABLES=" << s.glibc_tunables;
  return os.str();
}

std::string settingsJson(const Settings& s) {
  return json::Object()
      .add("at_num_threads", json::num(static_cast<long long>(s.at_threads)))
      .add("openblas_threads", s.openblas_threads < 0 ? "null" : json::num(static_cast<long long>(s.openblas_threads)))
      .add("OMP_NUM_THREADS", json::str(s.omp_num_threads))
      .add("OPENBLAS_NUM_THREADS", json::str(s.openblas_num_threads))
      .add("OPENBLAS_CORETYPE", json::str(s.openblas_coretype))
      .add("openblas_core", json::str(s.openblas_core))
      .add("GLIBC_TUNABLES", json::str(s.glibc_tunables))
      .done();
}

}  // namespace brisk::cli
