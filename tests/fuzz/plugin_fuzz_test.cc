// The load fuzzer for plugin files: seeded damaged copies of the real plugin
// (libbrisk_ops_cpu.so; elf_mutators.h says what is damaged) are handed to brisk the way
// the CLI's --plugin does (Options::plugins, here through Module::fromIR). Every case
// must end in success or one brisk::Error naming the file: never a crash (SIGSEGV,
// SIGBUS inside dlopen), an abort, another exception type or a hang.
//
// Each case runs in a forked child: a damaged library that dlopen accepts stays mapped
// for the life of the process (plugins are never closed) and registers its kernels, so
// one case must not see another's; and a crash must be a failing case, not the end of
// the test. The parent never loads a plugin or a model itself (it stays single-threaded
// so fork is safe).
//
// Case N is always the same file:
//   bazel test //tests/fuzz:plugin_fuzz_test --test_env=BRISK_FUZZ_ONLY='#17'
// replays one and writes it to the test's undeclared outputs; BRISK_FUZZ_CASES=N runs N
// cases instead of the suite's budget (kCases).
#include <elf.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "tests/fuzz/elf_mutators.h"
#include "tests/fuzz/load_fuzz.h"
#include "tests/testing/model_check.h"

namespace brisk::fuzz {
namespace {

constexpr int kCases = 400;
constexpr auto kCaseLimit = std::chrono::seconds(30);

const char* kIR = R"IR(
graph(%a : Tensor, %b : Tensor):
  %c : Tensor = aten::mul(%a, %b)
  return (%c)
)IR";

// Child exit codes.
enum : int { kLoaded = 0, kRefused = 10, kBadError = 11, kForeign = 12 };

std::string seedPlugin() { return testing::runfile("ops_cpu/libbrisk_ops_cpu.so"); }

// In the child: the plugin through the C++ API a user's --plugin reaches. Writes what
// went wrong to `report` (a pipe) and exits with one of the codes above.
[[noreturn]] void childLoad(const std::string& path, int report) {
  auto say = [&](const std::string& s) { (void)!::write(report, s.data(), s.size()); };
  int code = kLoaded;
  try {
    Options options;
    options.plugins = {path};
    options.use_delegates = false;
    auto m = Module::fromIR(kIR, options, "plugin_fuzz");
    say("loaded");
  } catch (const Error& e) {
    const std::string msg = e.what();
    char real[PATH_MAX];
    const std::string real_path = ::realpath(path.c_str(), real) ? real : path;
    if (msg.find('\n') != std::string::npos) {
      say("brisk::Error is not one line: " + msg);
      code = kBadError;
    } else if (msg.find(path) == std::string::npos && msg.find(real_path) == std::string::npos) {
      say("brisk::Error does not name the file " + path + ": " + msg);
      code = kBadError;
    } else {
      say(msg);
      code = kRefused;
    }
  } catch (const std::exception& e) {
    say(std::string(typeid(e).name()) + " escaped: " + oneLine(e.what()));
    code = kForeign;
  } catch (...) {
    say("a non-std exception escaped");
    code = kForeign;
  }
  ::_exit(code);
}

struct Result {
  int code = -1;       // the child's exit code, or -1
  int signal = 0;      // the signal that ended it
  bool hung = false;
  std::string report;  // what the child said
};

Result runCase(const std::string& path) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    childLoad(path, fds[1]);
  }
  ::close(fds[1]);
  Result r;
  const auto deadline = std::chrono::steady_clock::now() + kCaseLimit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.hung = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) r.report.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  if (!r.hung) {
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    else r.code = WEXITSTATUS(status);
  }
  return r;
}

TEST(PluginFuzz, SeedPluginLoads) {
  // The undamaged copy loads through the same path, or every refusal below would
  // test nothing but a broken harness.
  const std::string path = fuzzTmpDir() + "/libbrisk_fuzzed_plugin.so";
  std::ofstream(path, std::ios::binary) << readFileBytes(seedPlugin());
  Result r = runCase(path);
  EXPECT_EQ(r.code, kLoaded) << "signal " << r.signal << ": " << r.report;
}

// A copy of the plugin with its first program header of `type` edited.
std::string withProgramHeader(std::string bytes, uint32_t type, const std::function<void(Elf64_Phdr&)>& edit) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof(eh));
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    const uint64_t at = eh.e_phoff + i * sizeof(ph);
    std::memcpy(&ph, bytes.data() + at, sizeof(ph));
    if (ph.p_type != type) continue;
    edit(ph);
    std::memcpy(&bytes[at], &ph, sizeof(ph));
    return bytes;
  }
  throw std::runtime_error("the seed plugin has no program header of type " + std::to_string(type));
}

// A copy of the plugin with its first dynamic entry of `tag` edited.
std::string withDynamicTag(std::string bytes, int64_t tag, const std::function<void(Elf64_Dyn&)>& edit) {
  Elf64_Phdr dyn{};
  withProgramHeader(bytes, PT_DYNAMIC, [&](Elf64_Phdr& p) { dyn = p; });  // finds it, changes nothing
  for (uint64_t at = dyn.p_offset; at + sizeof(Elf64_Dyn) <= dyn.p_offset + dyn.p_filesz; at += sizeof(Elf64_Dyn)) {
    Elf64_Dyn d;
    std::memcpy(&d, bytes.data() + at, sizeof(d));
    if (d.d_tag != tag) continue;
    edit(d);
    std::memcpy(&bytes[at], &d, sizeof(d));
    return bytes;
  }
  throw std::runtime_error("the seed plugin has no dynamic tag " + std::to_string(tag));
}

// What the fuzzer found dlopen crashing on (SIGSEGV in ld.so, or its "Inconsistency
// detected" exit) before elf_check refused it, one case per kind, made directly so they
// stay covered whatever the mutators draw.
TEST(PluginFuzz, DamageThatCrashedDlopenIsRefused) {
  const std::string seed = readFileBytes(seedPlugin());
  auto retag = [](int64_t to) { return [to](Elf64_Dyn& d) { d.d_tag = to; }; };
  auto add = [](uint64_t n) { return [n](Elf64_Dyn& d) { d.d_un.d_val += n; }; };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"DT_PLTREL retagged (plugin case #145)", withDynamicTag(seed, DT_PLTREL, retag(0x54))},
      {"DT_RELAENT retagged (#233)", withDynamicTag(seed, DT_RELAENT, retag(DT_RELENT))},
      {"DT_VERSYM retagged (#183)", withDynamicTag(seed, DT_VERSYM, retag(0x6fffeff0))},
      {"DT_STRTAB past the file (#169)", withDynamicTag(seed, DT_STRTAB, add(seed.size()))},
      {"DT_INIT_ARRAYSZ grown (#122)", withDynamicTag(seed, DT_INIT_ARRAYSZ, add(8))},
      {"DT_GNU_HASH moved by 8 bytes (#102, ld.so assertion)", withDynamicTag(seed, DT_GNU_HASH, add(8))},
      {"DT_VERNEED moved by 4 bytes", withDynamicTag(seed, DT_VERNEED, add(4))},
      {"DT_NEEDED name past the strings (#127)", withDynamicTag(seed, DT_NEEDED, add(1ull << 40))},
      {"PT_DYNAMIC moved outside the segments (#48)",
       withProgramHeader(seed, PT_DYNAMIC, [](Elf64_Phdr& p) { p.p_vaddr += 1ull << 32; })},
      {"executable segment not readable (#294)",
       withProgramHeader(seed, PT_LOAD, [](Elf64_Phdr& p) { p.p_flags &= ~PF_R; })},
      // Found by BRISK_FUZZ_CASES=2000 after the first round of checks:
      {"DT_RELACOUNT past its relocations (#607, ld.so exit 127)", withDynamicTag(seed, DT_RELACOUNT, add(1 << 20))},
      {"DT_PLTRELSZ 0 (#1279)", withDynamicTag(seed, DT_PLTRELSZ, [](Elf64_Dyn& d) { d.d_un.d_val = 0; })},
      {"DT_INIT moved inside the code (#955)", withDynamicTag(seed, DT_INIT, add(8))},
      {"DT_VERNEED retagged DT_VERDEF (#1206)", withDynamicTag(seed, DT_VERNEED, retag(DT_VERDEF))},
      {"PT_PHDR moved (#411)", withProgramHeader(seed, PT_PHDR, [](Elf64_Phdr& p) { p.p_vaddr += 1ull << 30; })},
      {"PT_GNU_RELRO past the segments (#1082)",
       withProgramHeader(seed, PT_GNU_RELRO, [](Elf64_Phdr& p) { p.p_memsz += 1ull << 21; })},
  };
  const std::string path = fuzzTmpDir() + "/libbrisk_fuzzed_plugin.so";
  for (const auto& [what, bytes] : cases) {
    ::unlink(path.c_str());
    std::ofstream(path, std::ios::binary) << bytes;
    const Result r = runCase(path);
    EXPECT_EQ(r.code, kRefused) << what << ": signal " << r.signal << ", exit " << r.code << ": " << r.report;
  }
}

TEST(PluginFuzz, DamagedPluginFiles) {
  const std::string seed = readFileBytes(seedPlugin());
  // Not libbrisk_ops_cpu.so: the plugin's name comes from its file name, and a case
  // must be loaded as a plugin of its own, not served by (or refused as a second copy
  // of) an ops_cpu loaded from the runfiles.
  const std::string path = fuzzTmpDir() + "/libbrisk_fuzzed_plugin.so";
  const char* env = std::getenv("BRISK_FUZZ_CASES");
  const int cases = env ? std::atoi(env) : kCases;
  const char* only = std::getenv("BRISK_FUZZ_ONLY");
  int loaded = 0, refused = 0;
  for (int i = 0; i < cases; ++i) {
    const std::string name = "#" + std::to_string(i);
    if (only && name != only) continue;
    Rng rng(0x706c7567696eull ^ static_cast<uint64_t>(i));  // "plugin"
    const Mutation m = mutateElfFile(seed, rng);
    ::unlink(path.c_str());  // a fresh inode: the previous case's mapping is gone with its child
    std::ofstream(path, std::ios::binary) << m.bytes;
    if (only) saveCaseFile("plugin_" + name, m.bytes, ".so");
    const Result r = runCase(path);
    const std::string what = "plugin case " + name + " [" + m.description + "]";
    if (r.code == kLoaded) {
      ++loaded;
    } else if (r.code == kRefused) {
      ++refused;
    } else {
      saveCaseFile("plugin_" + name, m.bytes, ".so");
      if (r.hung) ADD_FAILURE() << what << ": hung (killed after " << kCaseLimit.count() << " s)";
      else if (r.signal) ADD_FAILURE() << what << ": crashed with " << strsignal(r.signal) << " (" << r.signal << ")";
      else if (r.code == kBadError || r.code == kForeign) ADD_FAILURE() << what << ": " << r.report;
      // ld.so's own "Inconsistency detected" assertions end the process with 127.
      else ADD_FAILURE() << what << ": the process exited with " << r.code << " instead of a brisk::Error";
    }
  }
  std::printf("plugin mutations: %d cases, %d loaded, %d refused with a brisk::Error naming the file\n", cases,
              loaded, refused);
  // The damage must reach both outcomes: all refused would mean the mutator only breaks
  // the ELF header, all loaded that it changes nothing the check or the loader reads.
  if (!only) {
    EXPECT_GT(refused, cases / 4);
    EXPECT_GT(loaded, 0);
  }
}

}  // namespace
}  // namespace brisk::fuzz
