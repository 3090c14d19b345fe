// libFuzzer entry points for runFuzzCase (load_fuzz.h), one binary per target:
//   model_fuzzer:  the input is a model archive (TorchScript or PT2), run with every
//                  seed's inputs;
//   inputs_fuzzer: the input is an inputs file, run on every seed model.
// The seeds (seeds.h) are also the corpus to start from: `bazel run
// //tests/fuzz:seed_corpus -- DIR model|inputs` (README.md).
// Built with clang under --config=fuzz (README.md); without it, the same binaries replay
// the files named on the command line (replay_main.cc).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "core/common/error.h"
#include "tests/fuzz/load_fuzz.h"
#include "tests/fuzz/seeds.h"

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

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** argv) {
  const char* tmp = std::getenv("TMPDIR");
  // Two fuzzers may run at once: each writes its own case file.
  const std::string work_dir = std::string(tmp ? tmp : "/tmp") + "/brisk_fuzz_" + std::to_string(getpid());
  std::system(("mkdir -p " + work_dir).c_str());
  // Every seed (seeds.h), TorchScript and PT2: a mutated PT2 archive runs with its
  // seed's inputs among the others, so mutations that keep it loadable reach its kernels.
  static brisk::fuzz::FuzzContext ctx = brisk::fuzz::fuzzerContext(zooDir((*argv)[0]), work_dir);
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
