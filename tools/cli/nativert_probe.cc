#include "tools/cli/nativert_probe.h"

#include "core/common/error.h"
#include "tools/cli/elf_symbols.h"
#include "tools/cli/format.h"

#if __has_include(<torch/nativert/ModelRunner.h>)
#define BRISK_HAS_NATIVERT_HEADER 1
#else
#define BRISK_HAS_NATIVERT_HEADER 0
#endif

namespace brisk::cli {
namespace {

// Itanium mangling of the names in namespace torch::nativert ("N5torch8nativert...") and
// of its class ModelRunner's members.
constexpr const char* kNamespace = "N5torch8nativert";
constexpr const char* kModelRunner = "N5torch8nativert11ModelRunner";

}  // namespace

NativeRtProbe probeNativeRt() {
  NativeRtProbe p;
  p.header = BRISK_HAS_NATIVERT_HEADER;
  p.libraries = loadedLibraries("libtorch");
  for (const std::string& lib : p.libraries) {
    try {
      std::string sym = findDefinedDynamicSymbol(lib, kModelRunner);
      if (!sym.empty()) {
        p.library = lib;
        p.symbol = sym;
        return p;
      }
      if (p.other_symbol.empty()) p.other_symbol = findDefinedDynamicSymbol(lib, kNamespace);
    } catch (const Error& e) {
      if (p.scan_error.empty()) p.scan_error = e.what();
    }
  }
  return p;
}

std::string describeNativeRt(const NativeRtProbe& p) {
  const std::string header = "torch/nativert/ModelRunner.h";
  if (!p.symbol.empty()) {
    if (!p.header)
      return "the loaded " + p.library + " defines torch::nativert::ModelRunner, but brisk was compiled without " +
             header + ": build against that libtorch's headers to compare with it";
    return "NativeRT is present (" + header + " at build time, torch::nativert::ModelRunner in " + p.library +
           "); brisk bench does not run it: tools/bench:compare's nativert executor does";
  }
  const char* verb = p.libraries.size() == 1 ? " defines " : " define ";
  std::string libs = p.libraries.empty()       ? "no libtorch*.so is loaded"
                     : p.other_symbol.empty() ? "the loaded " + join(p.libraries, ", ") + verb + "no torch::nativert symbol"
                                              : "the loaded " + join(p.libraries, ", ") + verb + "torch::nativert symbols (" +
                                                    p.other_symbol + ") but no ModelRunner";
  if (!p.scan_error.empty()) libs += " (" + p.scan_error + ")";
  return "not in this libtorch: " +
         (p.header ? header + " was there at build time, but " : "no " + header + " at build time, and ") + libs;
}

}  // namespace brisk::cli
