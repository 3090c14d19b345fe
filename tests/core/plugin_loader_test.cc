// The plugin loader: a working plugin registers a kernel that is then chosen and run;
// a missing file, a .so without the entry point, one whose libraries are missing and a
// plugin built for another ABI version are refused with errors that name the file and
// the reason. So are truncated or damaged files (checked before dlopen, which would
// fault on them) and a second copy of a loaded plugin from another folder.
#include <ATen/ATen.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/common/error.h"
#include "core/kernels/kernel_registry.h"
#include "core/executor/module.h"
#include "core/kernels/plugin_loader.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

const char* kIR = R"IR(
graph(%a : Tensor, %b : Tensor):
  %c : Tensor = aten::atan2(%a, %b)
  %d : Tensor = aten::mul(%c, %c)
  return (%d)
)IR";

std::string pluginFile(const std::string& name) { return testing::runfile("tests/plugins/" + name); }

using testing::errorOf;

TEST(PluginLoader, RegisteredKernelIsChosenAndRun) {
  Registries registries;
  Options options;
  options.plugins = {pluginFile("libbrisk_test_plugin.so")};
  auto module = Module::fromIR(kIR, options, "atan2", &registries);
  bool found = false;
  for (const auto& info : module->kernelReport()) {
    if (info.op != "aten::atan2") continue;
    found = true;
    EXPECT_EQ(info.kind, KernelKind::kOutVariant);
    EXPECT_EQ(info.provider, "test_plugin");
    EXPECT_EQ(info.detail, "counting atan2");
  }
  EXPECT_TRUE(found);

  void* handle = dlopen(pluginFile("libbrisk_test_plugin.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto calls = reinterpret_cast<int64_t (*)()>(dlsym(handle, "brisk_test_plugin_calls"));
  ASSERT_NE(calls, nullptr);
  const int64_t before = calls();
  at::Tensor a = at::randn({3, 4}), b = at::randn({3, 4});
  for (int i = 0; i < 3; ++i) {
    at::Tensor out = module->run({a, b}).toTensor();
    EXPECT_TRUE(at::allclose(out, at::atan2(a, b) * at::atan2(a, b)));
  }
  EXPECT_EQ(calls() - before, 3);
}

TEST(PluginLoader, OtherRegistriesAreUntouched) {
  Registries with_plugin, without;
  loadPlugin(pluginFile("libbrisk_test_plugin.so"), {}, with_plugin);
  EXPECT_FALSE(with_plugin.out_variant.lookup("aten::atan2").empty());
  EXPECT_TRUE(without.out_variant.lookup("aten::atan2").empty());
}

TEST(PluginLoader, MissingFileIsAnError) {
  Registries registries;
  std::string msg = errorOf([&] { loadPlugin("/nonexistent/libbrisk_nothing.so", {}, registries); });
  EXPECT_NE(msg.find("/nonexistent/libbrisk_nothing.so"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not found"), std::string::npos) << msg;
  msg = errorOf([&] { loadPlugin("no_such_plugin", {}, registries); });
  EXPECT_NE(msg.find("no_such_plugin"), std::string::npos) << msg;
  EXPECT_NE(msg.find("searched"), std::string::npos) << msg;
}

TEST(PluginLoader, MissingEntryPointIsAnError) {
  Registries registries;
  std::string msg = errorOf([&] { loadPlugin(pluginFile("libbrisk_no_entry.so"), {}, registries); });
  EXPECT_NE(msg.find("libbrisk_no_entry.so"), std::string::npos) << msg;
  EXPECT_NE(msg.find("brisk_plugin_entry"), std::string::npos) << msg;
}

TEST(PluginLoader, MissingDependencyNamesTheLibraryAndSetUp) {
  Registries registries;
  std::string msg = errorOf([&] { loadPlugin(pluginFile("libbrisk_needs_missing_lib.so"), {}, registries); });
  EXPECT_NE(msg.find("libbrisk_needs_missing_lib.so"), std::string::npos) << msg;
  EXPECT_NE(msg.find("libbrisk_not_installed.so.7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tools/setup.sh"), std::string::npos) << msg;
}

TEST(PluginLoader, OtherAbiVersionIsRefused) {
  Registries registries;
  std::string msg = errorOf([&] { loadPlugin(pluginFile("libbrisk_test_plugin_abi999.so"), {}, registries); });
  EXPECT_NE(msg.find("libbrisk_test_plugin_abi999.so"), std::string::npos) << msg;
  EXPECT_NE(msg.find("brisk ABI 999"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rebuild"), std::string::npos) << msg;
  // Nothing was registered.
  EXPECT_TRUE(registries.out_variant.lookup("aten::atan2").empty());
}

TEST(PluginLoader, ModuleLoadNamesModelAndPlugin) {
  Registries registries;
  Options options;
  options.plugins = {pluginFile("libbrisk_test_plugin_abi999.so")};
  std::string msg = errorOf([&] { Module::fromIR(kIR, options, "my-model", &registries); });
  EXPECT_NE(msg.find("my-model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("abi999"), std::string::npos) << msg;
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fresh folder under the test's temporary directory.
std::string tempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::filesystem::path d = std::filesystem::path(base ? base : "/tmp") / (name + "." + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

void writeFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(PluginLoader, DamagedFilesAreRefusedBeforeTheyAreMapped) {
  const std::string good = readAll(pluginFile("libbrisk_test_plugin.so"));
  ASSERT_GT(good.size(), 4096u);
  const std::string dir = tempDir("damaged_plugins");
  std::string zeroed_phoff = good;  // e_phoff (offset 32, 8 bytes) pointing far past the end
  for (int i = 32; i < 40; ++i) zeroed_phoff[i] = '\x7f';
  const std::pair<std::string, std::string> cases[] = {
      {good.substr(0, good.size() / 2), "truncated"},  // `head -c N lib.so > t.so`
      {good.substr(0, 100), "program header table ends at byte"},
      {std::string(8192, '\0'), "no ELF header"},
      {"#!/bin/sh\necho not a library\n", "too short"},
      {zeroed_phoff, "program header table"},
  };
  int i = 0;
  for (const auto& [bytes, needle] : cases) {
    const std::string path = dir + "/libbrisk_damaged" + std::to_string(i++) + ".so";
    writeFile(path, bytes);
    Registries registries;
    std::string msg = errorOf([&] { loadPlugin(path, {}, registries); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(PluginLoader, SecondCopyFromAnotherFolderIsRefusedAndBreaksNothing) {
  const std::string original = pluginFile("libbrisk_test_plugin.so");
  Registries first;
  loadPlugin(original, {}, first);
  const std::string dir = tempDir("plugin_copy");
  const std::string copy = dir + "/libbrisk_test_plugin.so";
  writeFile(copy, readAll(original));

  Registries registries;
  std::string msg = errorOf([&] { loadPlugin(copy, {}, registries); });
  EXPECT_NE(msg.find(copy), std::string::npos) << msg;
  EXPECT_NE(msg.find("second copy of plugin 'test_plugin'"), std::string::npos) << msg;
  EXPECT_TRUE(registries.out_variant.lookup("aten::atan2").empty()) << "nothing registered";

  // Asked for by name where the copy is first on the search path: the loaded copy serves.
  PluginInfo info = loadPlugin("test_plugin", {dir}, registries);
  EXPECT_EQ(info.name, "test_plugin");
  EXPECT_NE(info.path, copy);
  EXPECT_FALSE(registries.out_variant.lookup("aten::atan2").empty());

  // And the process still loads models with that plugin.
  Registries later;
  Options options;
  options.plugins = {original};
  auto module = Module::fromIR(kIR, options, "atan2", &later);
  at::Tensor a = at::randn({2, 3}), b = at::randn({2, 3});
  EXPECT_TRUE(at::allclose(module->run({a, b}).toTensor(), at::atan2(a, b) * at::atan2(a, b)));
}

}  // namespace
}  // namespace brisk
