#include "core/common/self_paths.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace brisk {

std::string selfExe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

std::vector<std::string> runfilesRoots() {
  std::vector<std::string> roots;
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"})
    if (const char* r = std::getenv(var); r && *r) roots.push_back(r);
  if (const std::string exe = selfExe(); !exe.empty()) roots.push_back(exe + ".runfiles");
  return roots;
}

bool isRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool isDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace brisk
