// The `brisk` command-line tool: run, bench and inspect TorchScript models with brisk.
// See tools/cli/ (`brisk help`).
#include "tools/cli/commands.h"

int main(int argc, char** argv) { return brisk::cli::main(argc, argv); }
