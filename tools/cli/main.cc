#include <cstdio>
#include <exception>
#include <iostream>

#include "core/common/error.h"
#include "tools/cli/commands.h"
#include "tools/cli/flags.h"
#include "tools/cli/options_flags.h"
#include "tools/cli/settings.h"

namespace brisk::cli {

std::string commonFlagsUsage() {
  CommonFlags f;
  FlagParser p;
  f.addTo(p);
  return p.usage();
}

std::string usage() {
  return std::string(
             "brisk: static-graph CPU inference for TorchScript models\n"
             "\n"
             "usage: brisk <command> [MODEL] [flags]\n"
             "\n"
             "MODEL is a TorchScript file (torch.jit.save) or the name of a bundled model\n"
             "(e.g. mlp, resnet18, control_flow); default: resnet18. Inputs default to the\n"
             "model's <model>.inputs.pt (torch.save({\"args\": [...], \"kwargs\": {...}})).\n"
             "\n"
             "commands:\n"
             "  run      run once; print output shapes, checksum and latency\n"
             "  bench    time brisk against the TorchScript interpreter in one process\n"
             "  inspect  show the kernel chosen for every node\n"
             "  help     show this help (also: brisk --help, brisk <command> --help)\n"
             "\n") +
         runUsage(false) + "\n" + benchUsage(false) + "\n" + inspectUsage(false) +
         "\nflags of every command (brisk::Options and process settings):\n" + commonFlagsUsage() +
         "\nexit codes: 0 ok; 1 run --check found a difference; 2 usage error or any error\n"
         "loading/running the model (one line on stderr: 'brisk: error: <message>').\n";
}

namespace {

int dispatch(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    std::cerr << usage();
    return kExitError;
  }
  const std::string& cmd = argv[0];
  std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    if (!rest.empty() && rest[0] == "run") std::cout << runUsage(true);
    else if (!rest.empty() && rest[0] == "bench") std::cout << benchUsage(true);
    else if (!rest.empty() && rest[0] == "inspect") std::cout << inspectUsage(true);
    else std::cout << usage();
    return kExitOk;
  }
  if (cmd == "run") return runCommand(rest);
  if (cmd == "bench") return benchCommand(rest);
  if (cmd == "inspect") return inspectCommand(rest);
  throw UsageError("unknown command '" + cmd + "'");
}

}  // namespace

int main(int argc, char** argv) {
  setupLogging(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    int rc = dispatch(args);
    std::cout.flush();
    return rc;
  } catch (const UsageError& e) {
    std::cout.flush();
    std::cerr << "brisk: error: " << e.what() << " (see 'brisk help')" << std::endl;
  } catch (const Error& e) {
    std::cout.flush();
    std::cerr << "brisk: error: " << oneLine(e.what()) << std::endl;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "brisk: error: " << describeException(e) << std::endl;
  } catch (...) {
    std::cout.flush();
    std::cerr << "brisk: error: unknown exception" << std::endl;
  }
  return kExitError;
}

}  // namespace brisk::cli
