// Replays the fuzz findings' reproducers (corpus/, made by corpus/make_reproducers.py, and
// PT2 archives (.pt2) saved from load_fuzz_test cases, named in README.md):
// each damaged model in corpus/models and corpus/aoti and inputs file in corpus/inputs
// must be refused at load with a brisk::Error naming it, and nothing else (no crash, no foreign
// exception, no out-of-bounds read that a later kernel would make).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "core/common/error.h"
#include "tests/fuzz/case_guard.h"
#include "tests/fuzz/load_fuzz.h"
#include "tests/fuzz/seeds.h"
#include "tests/testing/model_check.h"

namespace brisk::fuzz {
namespace {

std::vector<std::string> corpusFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(testing::runfile("tests/fuzz/corpus/" + dir)))
    if (e.path().extension() == ".pt" || e.path().extension() == ".pt2") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

FuzzContext emptyContext() {
  FuzzContext ctx;
  const char* tmp = std::getenv("TEST_TMPDIR");
  ctx.work_dir = tmp ? tmp : "/tmp";
  return ctx;
}

void expectAllRefused(const std::string& dir, FuzzTarget target, const std::string& expected) {
  CaseGuard guard(std::chrono::seconds(60));
  std::vector<std::string> files = corpusFiles(dir);
  ASSERT_GE(files.size(), 3u);
  for (const std::string& file : files) {
    guard.begin(file);
    try {
      FuzzOutcome out = runFuzzCase(readFileBytes(file), target, emptyContext());
      EXPECT_FALSE(out.loaded) << file << " loaded";
      // runFuzzCase has checked that the error is one line naming the file. A PT2
      // program's structural errors say what is missing ("module_call_graph has no root
      // signature") rather than "corrupt archive", which the archive-level checks say.
      const bool pt2_program = file.size() > 4 && file.compare(file.size() - 4, 4, ".pt2") == 0 &&
                               out.error.find("program '") != std::string::npos;
      if (!pt2_program) EXPECT_NE(out.error.find(expected), std::string::npos) << file << ": " << out.error;
    } catch (const FuzzFinding& f) {
      ADD_FAILURE() << file << ": " << f.what();
    }
    guard.end();
  }
}

// Damage torch's own reader tolerates (a member named outside the archive's folder): the
// file may load or be refused, but brisk's checks must not let torch's exceptions out.
TEST(FuzzCorpus, ToleratedDamageLoadsOrIsRefused) {
  CaseGuard guard(std::chrono::seconds(60));
  std::vector<std::string> files = corpusFiles("loads");
  ASSERT_GE(files.size(), 2u);
  for (const std::string& file : files) {
    guard.begin(file);
    const bool inputs = file.size() > 10 && file.compare(file.size() - 10, 10, ".inputs.pt") == 0;
    try {
      runFuzzCase(readFileBytes(file), inputs ? FuzzTarget::kInputsFile : FuzzTarget::kModelArchive, emptyContext());
    } catch (const FuzzFinding& f) {
      ADD_FAILURE() << file << ": " << f.what();
    }
    guard.end();
  }
}

TEST(FuzzCorpus, DamagedModelsAreRefusedWithABriskError) {
  expectAllRefused("models", FuzzTarget::kModelArchive, "corrupt archive");
}

TEST(FuzzCorpus, DamagedInputsFilesAreRefusedWithABriskError) {
  expectAllRefused("inputs", FuzzTarget::kInputsFile, "inputs file '");
}

// NativeRT archives whose AOTInductor files are damaged (corpus/aoti): each is refused by
// the aoti delegate before it maps the library, for the reason its name gives. With the
// delegate's plugin in the runfiles the delegate program is the one loaded, so an archive
// that loaded instead (its original program on brisk's kernels) fails here too.
TEST(FuzzCorpus, DamagedAotiArchivesAreRefusedForTheirReason) {
  const std::map<std::string, std::string> reason = {
      {"built_for_aarch64.pt2", "was built for machine aarch64"},
      {"built_for_another_isa.pt2", "was built for CPUs with SVE256"},
      {"built_for_cuda.pt2", "was built for device 'cuda'"},
      {"library_not_elf.pt2", "cannot be loaded: it"},
      {"metadata_not_json.pt2", "is not valid JSON"},
      {"no_library.pt2", "the delegate program does not match the archive's files"},
      {"truncated_library.pt2", "cannot be loaded: it"},
      {"two_libraries.pt2", "has two libraries"},
  };
  CaseGuard guard(std::chrono::seconds(60));
  std::vector<std::string> files = corpusFiles("aoti");
  EXPECT_EQ(files.size(), reason.size()) << "corpus/aoti and this test's list differ";
  for (const std::string& file : files) {
    const std::string name = std::filesystem::path(file).filename().string();
    auto want = reason.find(name);
    if (want == reason.end()) {
      ADD_FAILURE() << file << ": not in this test's list";
      continue;
    }
    guard.begin(file);
    try {
      FuzzOutcome out = runFuzzCase(readFileBytes(file), FuzzTarget::kModelArchive, emptyContext());
      EXPECT_FALSE(out.loaded) << file << " loaded";
      // The corpus was compiled on a CPU with AVX512 and AMX. The delegate checks the ISA
      // before the files, so on a CPU without them that is the reason it gives first.
      const bool isa_first = out.error.find("and this CPU lacks") != std::string::npos;
      if (!isa_first) EXPECT_NE(out.error.find(want->second), std::string::npos) << file << ": " << out.error;
    } catch (const FuzzFinding& f) {
      ADD_FAILURE() << file << ": " << f.what();
    }
    guard.end();
  }
}

// The file names of a BUILD list passed in `env` ($(rootpaths ...): space-separated).
std::set<std::string> buildList(const char* env) {
  std::set<std::string> names;
  std::istringstream in(std::getenv(env) ? std::getenv(env) : "");
  for (std::string path; in >> path;) names.insert(path.substr(path.rfind('/') + 1));
  return names;
}

// The libFuzzer targets start from these files (`bazel run :seed_corpus`) and run every
// case in fuzzerContext(): the BUILD lists must be seeds.h's, and every seed must load
// and run there, or the fuzzer starts from files it refuses (a PT2 archive without its
// inputs would never get past its input checks).
TEST(SeedCorpus, BuildListsMatchSeedsH) {
  std::set<std::string> models, inputs;
  for (const FuzzSeed& s : allSeeds()) {
    models.insert(s.model);
    inputs.insert(s.inputs);
  }
  EXPECT_EQ(buildList("BRISK_FUZZ_SEED_MODELS"), models);
  EXPECT_EQ(buildList("BRISK_FUZZ_SEED_INPUTS"), inputs);
  size_t pt2 = 0;
  for (const std::string& m : models) pt2 += m.size() > 4 && m.compare(m.size() - 4, 4, ".pt2") == 0;
  EXPECT_GE(pt2, 3u) << "the seed corpus has too few PT2 archives";
}

TEST(SeedCorpus, EverySeedLoadsAndRunsInTheFuzzersContext) {
  const FuzzContext ctx = fuzzerContext(testing::runfile("tools/zoo"), emptyContext().work_dir);
  CaseGuard guard(std::chrono::seconds(60));
  for (const FuzzSeed& s : allSeeds()) {
    for (const auto& [file, target] : {std::pair{s.model, FuzzTarget::kModelArchive},
                                       std::pair{s.inputs, FuzzTarget::kInputsFile}}) {
      guard.begin(file);
      try {
        const FuzzOutcome out = runFuzzCase(readFileBytes(testing::zooFile(file)), target, ctx);
        EXPECT_TRUE(out.loaded) << file << ": " << out.error;
        EXPECT_GE(out.runs_ok, 1u) << file << " (" << targetName(target) << "): no run succeeded";
      } catch (const FuzzFinding& f) {
        ADD_FAILURE() << file << ": " << f.what();
      }
      guard.end();
    }
  }
}

}  // namespace
}  // namespace brisk::fuzz
