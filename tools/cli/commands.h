#pragma once
// The brisk CLI's entry point and subcommands. Each command takes its arguments
// (after the subcommand name) and returns the process exit code; errors are thrown
// (UsageError, brisk::Error, std::exception) and turned into one stderr line by main().
#include <string>
#include <vector>

namespace brisk::cli {

// Exit codes.
constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;  // run --check: brisk's output differs from the interpreter's
constexpr int kExitError = 2;     // usage error, or any error loading/running the model

int runCommand(const std::vector<std::string>& args);
int benchCommand(const std::vector<std::string>& args);
int inspectCommand(const std::vector<std::string>& args);

// Per-command help (synopsis and the command's own flags); `common` adds the flags
// every command takes.
std::string runUsage(bool common);
std::string benchUsage(bool common);
std::string inspectUsage(bool common);
std::string commonFlagsUsage();
std::string usage();

// `brisk ARGS...`: dispatches, prints errors as `brisk: error: <message>`.
int main(int argc, char** argv);

}  // namespace brisk::cli
