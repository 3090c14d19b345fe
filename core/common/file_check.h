#pragma once
// Why a path the user gave cannot be read as a file, told apart before anything opens
// it: opening a FIFO blocks, and /dev/zero never ends, so "not found" or a hang would
// be the answer otherwise.
#include <cstdint>
#include <string>

namespace brisk {

// Which file a path named, and which version of it: a Module rebuilds from its model file
// at every swapWeights, so a file replaced or rewritten since load would silently bring
// in another model's weights or forward. Equal stamps mean the same inode with the same
// size, modification and status-change times (nanoseconds; the status-change time cannot
// be set back by the writer, so `cp -p` or `touch -d` do not hide a rewrite).
struct FileStamp {
  uint64_t device = 0, inode = 0, size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
// The stamp of the file `path` names now; all zero when it cannot be examined.
FileStamp fileStamp(const std::string& path);

// `path` made absolute against the working directory now, so a later chdir does not
// change which file it names. `path` itself when it is already absolute or cannot be
// resolved.
std::string absolutePath(const std::string& path);

// Empty when `path` is a regular file this process may read; otherwise the reason as a
// predicate to follow "it": "does not exist", "is a directory", "is a FIFO (named pipe),
// not a regular file", "is a symbolic link loop", "is not readable (permission denied)".
std::string fileProblem(const std::string& path);

// True when something (anything: file, directory, device, dangling or looping link)
// exists at `path`.
bool pathExists(const std::string& path);

}  // namespace brisk
