#include "tools/cli/elf_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "core/common/error.h"

namespace brisk::cli {
namespace {

// A read-only mapping of a whole file, unmapped on scope exit.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error("cannot open " + path + ": " + std::strerror(errno));
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
      ::close(fd);
      throw Error("cannot read " + path + ": not a regular, non-empty file");
    }
    size_ = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) throw Error("cannot map " + path + ": " + std::strerror(errno));
    data_ = static_cast<const char*>(p);
  }
  ~MappedFile() { ::munmap(const_cast<char*>(data_), size_); }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // `count` objects of T at `offset`, bounds-checked against the file.
  template <typename T>
  const T* at(uint64_t offset, uint64_t count, const char* what) const {
    if (offset > size_ || count > (size_ - offset) / sizeof(T))
      throw Error(path_ + ": " + what + " lies outside the file (a damaged or not an ELF file)");
    return reinterpret_cast<const T*>(data_ + offset);
  }
  size_t size() const { return size_; }

 private:
  std::string path_;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

std::vector<std::string> loadedLibraries(std::string_view prefix) {
  struct Query {
    std::string_view prefix;
    std::vector<std::string> found;
  } q{prefix, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        const std::string_view path = info->dlpi_name ? info->dlpi_name : "";
        const std::string_view base = path.substr(path.rfind('/') + 1);  // npos + 1 == 0
        if (!path.empty() && base.substr(0, q->prefix.size()) == q->prefix) q->found.emplace_back(path);
        return 0;
      },
      &q);
  return q.found;
}

std::string findDefinedDynamicSymbol(const std::string& elf_path, std::string_view needle) {
  MappedFile f(elf_path);
  const auto* eh = f.at<Elf64_Ehdr>(0, 1, "the ELF header");
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
    throw Error(elf_path + ": not a 64-bit ELF file");
  // Without section headers (sstrip) the dynamic table is only reachable through the
  // program headers; no libtorch ships that way, so it is an error rather than "none".
  if (eh->e_shnum == 0) throw Error(elf_path + ": no section headers, its symbols cannot be listed");
  if (eh->e_shentsize != sizeof(Elf64_Shdr))
    throw Error(elf_path + ": unexpected section header size " + std::to_string(eh->e_shentsize));
  const auto* sections = f.at<Elf64_Shdr>(eh->e_shoff, eh->e_shnum, "the section header table");
  for (unsigned i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr& symtab = sections[i];
    if (symtab.sh_type != SHT_DYNSYM) continue;
    if (symtab.sh_link >= eh->e_shnum) throw Error(elf_path + ": .dynsym links to no string table");
    const Elf64_Shdr& strtab = sections[symtab.sh_link];
    const char* strings = f.at<char>(strtab.sh_offset, strtab.sh_size, ".dynstr");
    const uint64_t count = symtab.sh_entsize == sizeof(Elf64_Sym) ? symtab.sh_size / sizeof(Elf64_Sym) : 0;
    const auto* syms = f.at<Elf64_Sym>(symtab.sh_offset, count, ".dynsym");
    for (uint64_t s = 0; s < count; ++s) {
      // Undefined entries are what the library imports, not what it has.
      if (syms[s].st_shndx == SHN_UNDEF || syms[s].st_name >= strtab.sh_size) continue;
      const char* name = strings + syms[s].st_name;
      const std::string_view sv(name, ::strnlen(name, strtab.sh_size - syms[s].st_name));
      if (sv.find(needle) != std::string_view::npos) return std::string(sv);
    }
  }
  return "";
}

}  // namespace brisk::cli
