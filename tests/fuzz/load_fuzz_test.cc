// The deterministic mutation driver: a fixed number of structured mutations of each seed
// (a zoo model archive and its inputs file), each run through runFuzzCase. Case N of a
// seed is always the same file (mutators.h), so a failure names a case that reproduces:
//   bazel test //tests/fuzz:load_fuzz_test --test_env=BRISK_FUZZ_ONLY='mlp/model/#17'
// writes that case's file to the test's undeclared outputs (bazel-testlogs/.../outputs).
// BRISK_FUZZ_CASES=N overrides the per-seed budget for a longer local run; the suite's
// budget is the constant below (README.md gives the wall time).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "core/executor/module.h"
#include "tests/fuzz/case_guard.h"
#include "tests/fuzz/load_fuzz.h"
#include "tests/fuzz/mutators.h"
#include "tests/fuzz/pt2_mutators.h"
#include "tests/fuzz/seeds.h"
#include "tests/fuzz/zip_archive.h"
#include "tests/testing/model_check.h"

namespace brisk::fuzz {
namespace {

// The seeds: seeds.h (TorchScript models, and torch.export archives for the PT2 frontend).
constexpr int kModelCasesPerSeed = 200;
constexpr int kInputsCasesPerSeed = 150;
constexpr int kPt2CasesPerSeed = 300;
constexpr std::chrono::seconds kCaseLimit{60};

int casesPerSeed(int fallback) {
  const char* env = std::getenv("BRISK_FUZZ_CASES");
  return env ? std::atoi(env) : fallback;
}

// Case seeds differ per seed model and target, so two seeds never replay one stream.
uint64_t caseSeed(const std::string& model, FuzzTarget target, int index) {
  uint64_t h = 1469598103934665603ull;
  for (char c : model) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return h ^ (static_cast<uint64_t>(target) << 32) ^ static_cast<uint64_t>(index);
}

void saveFailingCase(const std::string& name, const std::string& bytes) { saveCaseFile(name, bytes, ".pt"); }

struct Tally {
  int cases = 0, loaded = 0, refused = 0, runs_ok = 0, runs_refused = 0;
};


// The mutations must reach both outcomes, or they test nothing: all-refused means they
// only ever break the container, all-loaded that they change nothing that matters.
void expectBothOutcomes(const std::string& what, const Tally& t) {
  EXPECT_GT(t.refused, t.cases / 10) << what;
  EXPECT_GT(t.loaded, 0) << what;
}

void printTally(const std::string& what, const Tally& t) {
  std::printf("%s: %d cases, %d loaded (%d runs ok, %d runs refused), %d refused at load\n", what.c_str(), t.cases,
              t.loaded, t.runs_ok, t.runs_refused, t.refused);
}

// `cases` mutations of one seed's archive (TorchScript or PT2 mutators by its kind) or
// inputs file, each through runFuzzCase: a brisk::Error at load or run, or a run that
// returns; anything else fails the test, a crash names the case, a hang trips `guard`.
void fuzzSeed(const FuzzSeed& s, FuzzTarget target, int cases, CaseGuard& guard, Tally& tally) {
  const std::string model_path = testing::zooFile(s.model);
  const std::string inputs_path = testing::zooFile(s.inputs);
  const std::string seed = readFileBytes(target == FuzzTarget::kModelArchive ? model_path : inputs_path);
  FuzzContext ctx = seedContext(model_path, inputs_path, Options{}, fuzzTmpDir());
  const char* only = std::getenv("BRISK_FUZZ_ONLY");
  for (int i = 0; i < cases; ++i) {
    const std::string name = s.name + "/" + targetName(target) + "/#" + std::to_string(i);
    if (only && name != only) continue;
    Rng rng(caseSeed(s.name, target, i));
    Mutation m = s.pt2                                 ? mutatePt2Archive(seed, rng)
                 : target == FuzzTarget::kModelArchive ? mutateModelArchive(seed, rng)
                                                       : mutateInputsFile(seed, rng);
    if (only) saveFailingCase(name, m.bytes);
    guard.begin(name + " [" + m.description + "]");
    try {
      FuzzOutcome out = runFuzzCase(m.bytes, target, ctx);
      ++tally.cases;
      (out.loaded ? tally.loaded : tally.refused)++;
      tally.runs_ok += static_cast<int>(out.runs_ok);
      tally.runs_refused += static_cast<int>(out.runs_refused);
    } catch (const FuzzFinding& f) {
      saveFailingCase(name, m.bytes);
      ADD_FAILURE() << name << " [" << m.description << "]: " << f.what();
    }
    guard.end();
  }
}

void fuzzTarget(FuzzTarget target, int budget, bool pt2 = false) {
  CaseGuard guard(kCaseLimit);
  Tally total;
  const bool only = std::getenv("BRISK_FUZZ_ONLY") != nullptr;
  for (const FuzzSeed& s : pt2 ? pt2Seeds() : torchScriptSeeds()) {
    Tally tally;
    fuzzSeed(s, target, casesPerSeed(budget), guard, tally);
    // PT2 seeds differ in what their archives hold (torch.cond subgraphs, pytree specs,
    // core-IR folding): each one's mutations must reach both outcomes on their own.
    if (pt2) {
      printTally("  " + s.name, tally);
      if (!only) expectBothOutcomes(s.name, tally);
    }
    total.cases += tally.cases;
    total.loaded += tally.loaded;
    total.refused += tally.refused;
    total.runs_ok += tally.runs_ok;
    total.runs_refused += tally.runs_refused;
  }
  printTally(std::string(pt2 ? "PT2 " : "") + targetName(target) + " mutations", total);
  if (!only) expectBothOutcomes(targetName(target), total);
}

TEST(LoadFuzz, ZipRewriteOfASeedStillLoads) {
  // The writer must produce archives torch reads, or every member mutation would be
  // refused at the zip layer and never reach the parsers behind it.
  std::string seed = readFileBytes(testing::zooModel("mlp"));
  std::vector<ZipMember> members = readZip(seed);
  ASSERT_GT(members.size(), 5u);
  std::string path = fuzzTmpDir() + "/rezipped.pt";
  std::ofstream(path, std::ios::binary) << writeZip(members);
  EXPECT_NO_THROW(Module::load(path));
  EXPECT_EQ(readZip(writeZip(members)).size(), members.size());
}

TEST(LoadFuzz, MutatedModelArchives) { fuzzTarget(FuzzTarget::kModelArchive, kModelCasesPerSeed); }

TEST(LoadFuzz, MutatedPt2Archives) { fuzzTarget(FuzzTarget::kModelArchive, kPt2CasesPerSeed, true); }

TEST(LoadFuzz, MutatedInputsFiles) { fuzzTarget(FuzzTarget::kInputsFile, kInputsCasesPerSeed); }

}  // namespace
}  // namespace brisk::fuzz
