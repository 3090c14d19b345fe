#include "tools/cli/settings.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <glog/logging.h>

#include <cstdlib>
#include <sstream>

#include "core/report/json.h"
#include "threading/thread_settings.h"

namespace brisk::cli {

namespace json = report::json;

void setupLogging(bool verbose) {
  if (!google::IsGoogleLoggingInitialized()) google::InitGoogleLogging("brisk");
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = verbose ? google::GLOG_INFO : google::GLOG_WARNING;
  FLAGS_stderrthreshold = verbose ? google::GLOG_INFO : google::GLOG_WARNING;
}

void setThreads(int n) {
  if (n <= 0) return;
  threading::ThreadSettings t;
  t.intra_op = n;
  threading::applyThreadSettings(t);
}

std::string envOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string(fallback);
}

Settings currentSettings() {
  Settings s;
  s.at_threads = at::get_num_threads();
  s.blas = at::hasMKL() ? "MKL" : "other";
  s.cpu_capability = at::get_cpu_capability();
  s.omp_num_threads = envOr("OMP_NUM_THREADS");
  s.mkl_num_threads = envOr("MKL_NUM_THREADS");
  s.glibc_tunables = envOr("GLIBC_TUNABLES");
  return s;
}

std::string describeSettings(const Settings& s) {
  std::ostringstream os;
  os << "at::get_num_threads=" << s.at_threads << " blas=" << s.blas << " cpu_capability=" << s.cpu_capability
     << " OMP_NUM_THREADS=" << s.omp_num_threads << " MKL_NUM_THREADS=" << s.mkl_num_threads
     << " GLIBC_TUNABLES=" << s.glibc_tunables;
  return os.str();
}

std::string settingsJson(const Settings& s) {
  return json::Object()
      .add("at_num_threads", json::num(static_cast<long long>(s.at_threads)))
      .add("blas", json::str(s.blas))
      .add("cpu_capability", json::str(s.cpu_capability))
      .add("OMP_NUM_THREADS", json::str(s.omp_num_threads))
      .add("MKL_NUM_THREADS", json::str(s.mkl_num_threads))
      .add("GLIBC_TUNABLES", json::str(s.glibc_tunables))
      .done();
}

}  // namespace brisk::cli
