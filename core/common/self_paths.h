#pragma once
// Where this process and its Bazel runfiles are: the plugin loader looks for plugins
// there, the CLI for the bundled zoo and for itself (the memory probe re-executes it).
#include <string>
#include <vector>

namespace brisk {

// The running executable's absolute path (/proc/self/exe); "" when it cannot be read.
std::string selfExe();

// Runfiles trees that may hold brisk's files, most specific first: $RUNFILES_DIR (set by
// `bazel run` and by launchers), $TEST_SRCDIR (tests), <executable>.runfiles (a binary
// started by hand). Each may not exist; the caller looks for its files under
// <root>/brisk/.
std::vector<std::string> runfilesRoots();

// True for a regular file (after symbolic links) / a directory.
bool isRegularFile(const std::string& path);
bool isDirectory(const std::string& path);

}  // namespace brisk
