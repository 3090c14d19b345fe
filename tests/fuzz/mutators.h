#pragma once
// Deterministic, structure-aware mutations of the two kinds of file a user hands brisk:
// a TorchScript archive (torch.jit.save) and an inputs file (torch.save). Each mutation
// is a pure function of the seed bytes and the Rng state, so a case number reproduces
// its file exactly, and each says what it did (the description names the case in logs).
#include <cstdint>
#include <string>

namespace brisk::fuzz {

// splitmix64: tiny, and the same sequence on every platform and standard library
// (std::uniform_int_distribution is not), so case N is the same file everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
  bool chance(int percent) { return below(100) < static_cast<size_t>(percent); }

 private:
  uint64_t s_;
};

struct Mutation {
  std::string bytes;
  std::string description;  // e.g. "member mlp/data.pkl: pickle: delete op #12 'q'"
};

// One mutation of a model archive: a member rewritten (pickles, TorchScript source,
// tensor data, version), members dropped/duplicated/renamed (archive rebuilt with
// valid CRCs), or raw damage to the archive bytes (headers, CRCs, sizes, truncation).
Mutation mutateModelArchive(const std::string& seed, Rng& rng);

// One mutation of an inputs file: its data.pkl (opcodes, storage types = dtypes, shapes,
// nesting), its tensor storage, or raw damage to the archive.
Mutation mutateInputsFile(const std::string& seed, Rng& rng);

// The parts, exposed for tests of the mutators themselves.
std::string mutatePickle(const std::string& pickle, Rng& rng, std::string& what);
std::string mutateSource(const std::string& source, Rng& rng, std::string& what);
std::string mutateRawArchive(const std::string& archive, Rng& rng, std::string& what);

}  // namespace brisk::fuzz
