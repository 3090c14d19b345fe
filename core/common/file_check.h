#pragma once
// Why a path the user gave cannot be read as a file, told apart before anything opens
// it: opening a FIFO blocks, and /dev/zero never ends, so "not found" or a hang would
// be the answer otherwise.
#include <string>

namespace brisk {

// Empty when `path` is a regular file this process may read; otherwise the reason as a
// predicate to follow "it": "does not exist", "is a directory", "is a FIFO (named pipe),
// not a regular file", "is a symbolic link loop", "is not readable (permission denied)".
std::string fileProblem(const std::string& path);

// True when something (anything: file, directory, device, dangling or looping link)
// exists at `path`.
bool pathExists(const std::string& path);

}  // namespace brisk
