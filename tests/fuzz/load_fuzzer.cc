// libFuzzer entry points for runFuzzCase (load_fuzz.h), one binary per target:
//   model_fuzzer:  the input is a model archive, run with every seed model's inputs;
//   inputs_fuzzer: the input is an inputs file, run on every seed model.
// Built with clang under --config=fuzz (README.md); without it, the same binaries replay
// the files named on the command line (replay_main.cc).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "core/common/error.h"
#include "tests/fuzz/load_fuzz.h"

#ifndef BRISK_FUZZ_INPUTS
#define BRISK_FUZZ_TARGET brisk::fuzz::FuzzTarget::kModelArchive
#else
#define BRISK_FUZZ_TARGET brisk::fuzz::FuzzTarget::kInputsFile
#endif

namespace {

brisk::fuzz::FuzzContext* g_ctx = nullptr;

// The zoo in the binary's runfiles (bazel run), or $BRISK_ZOO_DIR.
std::string zooDir(const char* argv0) {
  if (const char* d = std::getenv("BRISK_ZOO_DIR")) return d;
  std::string runfiles = std::string(argv0) + ".runfiles/brisk/tools/zoo";
  if (access((runfiles + "/mlp.pt").c_str(), R_OK) == 0) return runfiles;
  return "tools/zoo";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  static const char* const kSeeds[] = {"mlp", "deepandwide", "control_flow", "multi_output", "inception_fork"};
  const std::string zoo = zooDir((*argv)[0]);
  const char* tmp = std::getenv("TMPDIR");
  static brisk::fuzz::FuzzContext ctx;
  ctx.work_dir = std::string(tmp ? tmp : "/tmp");
  for (const char* seed : kSeeds) {
    brisk::fuzz::FuzzContext one = brisk::fuzz::seedContext(zoo + "/" + seed + ".pt", zoo + "/" + seed + ".inputs.pt",
                                                            ctx.options, ctx.work_dir);
    ctx.models.push_back(one.models.front());
    ctx.inputs.push_back(one.inputs.front());
  }
  // Two fuzzers may run at once: each writes its own case file.
  ctx.work_dir += "/brisk_fuzz_" + std::to_string(getpid());
  std::system(("mkdir -p " + ctx.work_dir).c_str());
  g_ctx = &ctx;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    brisk::fuzz::runFuzzCase(std::string_view(reinterpret_cast<const char*>(data), size), BRISK_FUZZ_TARGET, *g_ctx);
  } catch (const brisk::fuzz::FuzzFinding& f) {
    std::fprintf(stderr, "\n*** brisk fuzz finding: %s\n", f.what());
    std::abort();
  }
  return 0;
}
