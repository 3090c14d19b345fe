#include "core/common/file_check.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace brisk {

std::string fileProblem(const std::string& path) {
  if (path.empty()) return "is an empty path";
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    switch (errno) {
      case ENOENT: {
        struct stat lst;
        return ::lstat(path.c_str(), &lst) == 0 ? "is a dangling symbolic link" : "does not exist";
      }
      case ELOOP: return "is a symbolic link loop";
      case ENOTDIR: return "does not exist (a parent is not a directory)";
      case EACCES: return "is not accessible (permission denied)";
      case ENAMETOOLONG: return "has too long a name";
      default: return std::string("cannot be examined: ") + std::strerror(errno);
    }
  }
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (S_ISFIFO(st.st_mode)) return "is a FIFO (named pipe), not a regular file";
  if (S_ISCHR(st.st_mode)) return "is a character device, not a regular file";
  if (S_ISBLK(st.st_mode)) return "is a block device, not a regular file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if (::access(path.c_str(), R_OK) != 0) return "is not readable (permission denied)";
  return "";
}

FileStamp fileStamp(const std::string& path) {
  struct stat st;
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return {};
  auto ns = [](const struct timespec& t) { return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec; };
  return FileStamp{uint64_t(st.st_dev), uint64_t(st.st_ino), uint64_t(st.st_size), ns(st.st_mtim), ns(st.st_ctim)};
}

std::string absolutePath(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.string();
}

bool pathExists(const std::string& path) {
  struct stat st;
  return !path.empty() && ::lstat(path.c_str(), &st) == 0;
}

}  // namespace brisk
