#pragma once
// Which symbols the shared objects loaded in this process export: how `brisk bench`
// finds out at run time whether the libtorch it runs with has NativeRT
// (nativert_probe.h), whatever headers brisk was compiled against.
#include <string>
#include <string_view>
#include <vector>

namespace brisk::cli {

// Paths of the shared objects mapped into this process (dl_iterate_phdr) whose file
// name starts with `prefix`, e.g. "libtorch" -> .../libtorch_cpu.so, .../libtorch.so.
std::vector<std::string> loadedLibraries(std::string_view prefix);

// The first symbol that `elf_path` defines in its dynamic symbol table (what dlsym can
// find) whose mangled name contains `needle`, or "" when none does. Reads the file's
// section headers and .dynsym through a read-only mapping. Throws brisk::Error naming
// the file when it is not a readable 64-bit ELF file or its tables are out of bounds.
std::string findDefinedDynamicSymbol(const std::string& elf_path, std::string_view needle);

}  // namespace brisk::cli
