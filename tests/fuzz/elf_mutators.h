#pragma once
// Deterministic damage to a plugin file (a 64-bit ELF shared object), aimed at what the
// dynamic loader trusts: the ELF header, the program header table, the section header
// table and the dynamic section. Each mutation is a pure function of the seed bytes and
// the Rng state (case N is the same file on every run) and says what it did.
#include <string>

#include "tests/fuzz/mutators.h"

namespace brisk::fuzz {

// One of: a truncation (inside the ELF header, the program headers, the section headers,
// the dynamic section, a segment, or anywhere), bit flips in one of those regions, or one
// header field (ELF header, a program header, a section header, a dynamic entry)
// overwritten with a value chosen to be out of range (0, all ones, the file size and its
// neighbours, 2^63, a wrong class / data / type / machine, a segment ending past the
// file). Throws std::runtime_error if the seed is not a 64-bit ELF file.
Mutation mutateElfFile(const std::string& seed, Rng& rng);

}  // namespace brisk::fuzz
