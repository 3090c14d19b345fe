// Replays the fuzz findings' reproducers (corpus/, made by corpus/make_reproducers.py):
// each damaged model in corpus/models must be refused at load with a brisk::Error
// naming it, and nothing else (no crash, no foreign exception).
//
// corpus/open/ holds reproducers of findings whose fix belongs outside the loading path
// (README.md); OpenFindings.* replays them with the same rule and fails (or crashes) until
// they are fixed, so it is tagged manual in BUILD: `bazel test //tests/fuzz:fuzz_corpus_open_test`.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "core/model_inputs.h"
#include "core/module.h"
#include "tests/fuzz/case_guard.h"
#include "tests/fuzz/load_fuzz.h"
#include "tests/testing/model_check.h"

namespace brisk::fuzz {
namespace {

std::vector<std::string> corpusFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(testing::runfile("tests/fuzz/corpus/" + dir)))
    if (e.path().extension() == ".pt") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

#ifndef BRISK_FUZZ_OPEN
FuzzContext emptyContext() {
  FuzzContext ctx;
  const char* tmp = std::getenv("TEST_TMPDIR");
  ctx.work_dir = tmp ? tmp : "/tmp";
  return ctx;
}

TEST(FuzzCorpus, DamagedModelsAreRefusedWithABriskError) {
  CaseGuard guard(std::chrono::seconds(60));
  std::vector<std::string> files = corpusFiles("models");
  ASSERT_GE(files.size(), 2u);
  for (const std::string& file : files) {
    guard.begin(file);
    try {
      FuzzOutcome out = runFuzzCase(readFileBytes(file), FuzzTarget::kModelArchive, emptyContext());
      EXPECT_FALSE(out.loaded) << file << " loaded";
      EXPECT_NE(out.error.find("corrupt archive"), std::string::npos) << file << ": " << out.error;
    } catch (const FuzzFinding& f) {
      ADD_FAILURE() << file << ": " << f.what();
    }
    guard.end();
  }
}

#else
TEST(OpenFindings, DamagedInputsFilesAreRefusedWithABriskError) {
  CaseGuard guard(std::chrono::seconds(60));
  for (const std::string& file : corpusFiles("open")) {
    guard.begin(file);
    try {
      // Loading must already refuse them: once accepted, the damage is read out of bounds.
      if (file.size() > 10 && file.compare(file.size() - 10, 10, ".inputs.pt") == 0)
        loadInputs(file);
      else
        Module::load(file);
      ADD_FAILURE() << file << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << file << ": " << typeid(e).name() << " escaped: " << e.what();
    }
    guard.end();
  }
}
#endif

}  // namespace
}  // namespace brisk::fuzz
