// The NativeRT row of `brisk bench` rests on two checks (tools/cli/nativert_probe.h): the
// ELF scan must find symbols that are there and only those, survive files that are not
// ELF, and the row's text must follow the facts found.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/common/error.h"
#include "tools/cli/elf_symbols.h"
#include "tools/cli/nativert_probe.h"

// Exported by the test binary itself (//core links with -rdynamic).
extern "C" __attribute__((used, visibility("default"))) int brisk_nativert_probe_test_marker() { return 42; }

namespace brisk::cli {
namespace {

std::string tmpFile(const std::string& name, const std::string& bytes) {
  const char* d = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(d ? d : "/tmp") + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string libtorchCpu() {
  const std::vector<std::string> libs = loadedLibraries("libtorch_cpu");
  return libs.empty() ? "" : libs.front();
}

TEST(ElfSymbols, FindsLoadedLibtorch) {
  EXPECT_FALSE(libtorchCpu().empty()) << "this test links libtorch_cpu: dl_iterate_phdr must list it";
  EXPECT_TRUE(loadedLibraries("no_such_library_prefix").empty());
}

TEST(ElfSymbols, FindsDefinedSymbolsOnly) {
  EXPECT_EQ(findDefinedDynamicSymbol("/proc/self/exe", "nativert_probe_test_marker"),
            "brisk_nativert_probe_test_marker");
  const std::string lib = libtorchCpu();
  ASSERT_FALSE(lib.empty());
  EXPECT_NE(findDefinedDynamicSymbol(lib, "N2at4_ops"), "");  // ATen's operator entry points
  EXPECT_EQ(findDefinedDynamicSymbol(lib, "no_such_symbol_anywhere_42"), "");
  // libtorch_cpu imports pthread_create but does not define it: an import is not a match.
  EXPECT_EQ(findDefinedDynamicSymbol(lib, "pthread_create"), "");
}

TEST(ElfSymbols, RefusesFilesThatAreNotElf) {
  EXPECT_THROW(findDefinedDynamicSymbol(tmpFile("text.so", "not an ELF file at all, but long enough to hold "
                                                           "a header of sixty-four bytes"), "x"),
               Error);
  EXPECT_THROW(findDefinedDynamicSymbol(tmpFile("empty.so", ""), "x"), Error);
  EXPECT_THROW(findDefinedDynamicSymbol(tmpFile("none/missing.so", ""), "x"), Error);
  // A real header whose section table lies past the end of the file.
  std::ifstream self("/proc/self/exe", std::ios::binary);
  std::string head(64, '\0');
  self.read(head.data(), 64);
  EXPECT_THROW(findDefinedDynamicSymbol(tmpFile("truncated.so", head), "x"), Error);
}

TEST(NativeRtProbe, ScansTheLoadedLibtorch) {
  const NativeRtProbe p = probeNativeRt();
#if __has_include(<torch/nativert/ModelRunner.h>)
  EXPECT_TRUE(p.header);
#else
  EXPECT_FALSE(p.header);
#endif
  EXPECT_FALSE(p.libraries.empty());
  EXPECT_EQ(p.scan_error, "");
  // Whatever was found must be what the libraries define.
  if (!p.symbol.empty()) EXPECT_NE(findDefinedDynamicSymbol(p.library, "N5torch8nativert11ModelRunner"), "");
  const std::string why = describeNativeRt(p);
  EXPECT_EQ(why.find('\n'), std::string::npos);
  EXPECT_NE(why.find(p.libraries.front()), std::string::npos) << why;
}

TEST(NativeRtProbe, DescriptionFollowsTheFacts) {
  NativeRtProbe none;
  none.libraries = {"/l/libtorch_cpu.so"};
  EXPECT_EQ(describeNativeRt(none),
            "not in this libtorch: no torch/nativert/ModelRunner.h at build time, and the loaded "
            "/l/libtorch_cpu.so defines no torch::nativert symbol");
  NativeRtProbe lib_only = none;
  lib_only.library = "/l/libtorch_cpu.so";
  lib_only.symbol = "_ZN5torch8nativert11ModelRunnerD1Ev";
  EXPECT_NE(describeNativeRt(lib_only).find("compiled without torch/nativert/ModelRunner.h"), std::string::npos);
  NativeRtProbe both = lib_only;
  both.header = true;
  EXPECT_NE(describeNativeRt(both).find("NativeRT is present"), std::string::npos);
  NativeRtProbe header_only = none;
  header_only.header = true;
  header_only.other_symbol = "_ZN5torch8nativert5GraphD1Ev";
  EXPECT_EQ(describeNativeRt(header_only),
            "not in this libtorch: torch/nativert/ModelRunner.h was there at build time, but the loaded "
            "/l/libtorch_cpu.so defines torch::nativert symbols (_ZN5torch8nativert5GraphD1Ev) but no ModelRunner");
}

}  // namespace
}  // namespace brisk::cli
