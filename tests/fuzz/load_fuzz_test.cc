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
#include "tests/fuzz/zip_archive.h"
#include "tests/testing/model_check.h"

namespace brisk::fuzz {
namespace {

// Small zoo models whose load takes well under a second: the budget goes into cases, not
// into loading resnet18 a thousand times.
const char* const kSeeds[] = {"mlp", "deepandwide", "control_flow", "multi_output", "inception_fork"};
constexpr int kModelCasesPerSeed = 200;
constexpr int kInputsCasesPerSeed = 150;
// torch.export archives (the PT2 frontend), each with the inputs file it runs on.
struct Pt2Seed {
  const char* archive;
  const char* inputs;
};
const Pt2Seed kPt2Seeds[] = {{"mlp.pt2", "mlp.inputs.pt"},
                             {"mlp.core.pt2", "mlp.inputs.pt"},
                             {"cond_model.pt2", "cond_model.inputs.pt"},
                             {"pytree_io.pt2", "pytree_io.inputs.pt"}};
constexpr int kPt2CasesPerSeed = 300;
constexpr std::chrono::seconds kCaseLimit{60};

std::string tmpDir() {
  const char* d = std::getenv("TEST_TMPDIR");
  return d ? d : "/tmp";
}

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

void saveFailingCase(const std::string& name, const std::string& bytes) {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  std::string file = name;
  for (char& c : file)
    if (c == '/' || c == '#') c = '_';
  std::ofstream(std::string(dir ? dir : tmpDir().c_str()) + "/" + file + ".pt", std::ios::binary) << bytes;
}

struct Tally {
  int cases = 0, loaded = 0, refused = 0, runs_ok = 0, runs_refused = 0;
};


// `model` is a zoo model name (its TorchScript archive and inputs file), or a PT2 archive's
// file name with `pt2_inputs` the inputs file it runs on.
void fuzzSeed(const std::string& model, FuzzTarget target, int cases, CaseGuard& guard, Tally& tally,
              const char* pt2_inputs = nullptr) {
  const std::string model_path = pt2_inputs ? testing::zooFile(model) : testing::zooModel(model);
  const std::string inputs_path = testing::zooFile(pt2_inputs ? std::string(pt2_inputs) : model + ".inputs.pt");
  const std::string seed = readFileBytes(target == FuzzTarget::kModelArchive ? model_path : inputs_path);
  FuzzContext ctx = seedContext(model_path, inputs_path, Options{}, tmpDir());
  const char* only = std::getenv("BRISK_FUZZ_ONLY");
  for (int i = 0; i < cases; ++i) {
    const std::string name = model + "/" + targetName(target) + "/#" + std::to_string(i);
    if (only && name != only) continue;
    Rng rng(caseSeed(model, target, i));
    Mutation m = pt2_inputs                            ? mutatePt2Archive(seed, rng)
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
  Tally tally;
  if (pt2) {
    for (const Pt2Seed& s : kPt2Seeds) fuzzSeed(s.archive, target, casesPerSeed(budget), guard, tally, s.inputs);
  } else {
    for (const char* model : kSeeds) fuzzSeed(model, target, casesPerSeed(budget), guard, tally);
  }
  std::printf(
      "%s%s mutations: %d cases, %d loaded (%d runs ok, %d runs refused), %d refused at load\n",
      pt2 ? "PT2 " : "", targetName(target), tally.cases, tally.loaded, tally.runs_ok, tally.runs_refused, tally.refused);
  if (std::getenv("BRISK_FUZZ_ONLY")) return;
  // The mutations must reach both outcomes, or they test nothing: all-refused means
  // they only ever break the container, all-loaded that they change nothing that matters.
  EXPECT_GT(tally.refused, tally.cases / 10);
  EXPECT_GT(tally.loaded, 0);
}

TEST(LoadFuzz, ZipRewriteOfASeedStillLoads) {
  // The writer must produce archives torch reads, or every member mutation would be
  // refused at the zip layer and never reach the parsers behind it.
  std::string seed = readFileBytes(testing::zooModel("mlp"));
  std::vector<ZipMember> members = readZip(seed);
  ASSERT_GT(members.size(), 5u);
  std::string path = tmpDir() + "/rezipped.pt";
  std::ofstream(path, std::ios::binary) << writeZip(members);
  EXPECT_NO_THROW(Module::load(path));
  EXPECT_EQ(readZip(writeZip(members)).size(), members.size());
}

TEST(LoadFuzz, MutatedModelArchives) { fuzzTarget(FuzzTarget::kModelArchive, kModelCasesPerSeed); }

TEST(LoadFuzz, MutatedPt2Archives) { fuzzTarget(FuzzTarget::kModelArchive, kPt2CasesPerSeed, true); }

TEST(LoadFuzz, MutatedInputsFiles) { fuzzTarget(FuzzTarget::kInputsFile, kInputsCasesPerSeed); }

}  // namespace
}  // namespace brisk::fuzz
