#include "core/kernels/elf_check.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace brisk {
namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr const char* kHostMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr const char* kHostMachineName = "AArch64";
#else
#error "elf_check.cc: add this machine's ELF e_machine"
#endif

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool readAt(int fd, void* buf, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, static_cast<char*>(buf) + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

// offset + count * entry <= size, without overflow.
bool fits(uint64_t offset, uint64_t count, uint64_t entry, uint64_t size) {
  if (offset > size) return false;
  if (entry != 0 && count > (size - offset) / entry) return false;
  return true;
}

std::string truncated(const std::string& what, uint64_t end, uint64_t size) {
  return "is truncated or damaged: " + what + " ends at byte " + std::to_string(end) + ", the file has " +
         std::to_string(size) + " bytes";
}

}  // namespace

std::string elfSharedObjectProblem(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return std::string("cannot be opened: ") + std::strerror(errno);
  struct stat st;
  if (::fstat(f.fd, &st) != 0) return std::string("cannot be examined: ") + std::strerror(errno);
  const uint64_t size = static_cast<uint64_t>(st.st_size);

  Elf64_Ehdr eh;
  if (size < sizeof(eh) || !readAt(f.fd, &eh, sizeof(eh), 0))
    return "is not a shared object: " + std::to_string(size) + " bytes, too short for an ELF header";
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return "is not a shared object (no ELF header)";
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return "is not a 64-bit little-endian ELF file";
  if (eh.e_type != ET_DYN) return "is an ELF file but not a shared object (e_type " + std::to_string(eh.e_type) + ")";
  if (eh.e_machine != kHostMachine)
    return "is a shared object for another machine (e_machine " + std::to_string(eh.e_machine) + ", this one is " +
           kHostMachineName + ")";

  if (eh.e_phnum == 0) return "is damaged: it has no program headers";
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) return "is damaged: unexpected program header size";
  if (!fits(eh.e_phoff, eh.e_phnum, sizeof(Elf64_Phdr), size))
    return truncated("the program header table", eh.e_phoff + uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr), size);
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!readAt(f.fd, &ph, sizeof(ph), eh.e_phoff + uint64_t(i) * sizeof(ph)))
      return "cannot be read (program header " + std::to_string(i) + ")";
    if (ph.p_filesz > 0 && !fits(ph.p_offset, 1, ph.p_filesz, size))
      return truncated("segment " + std::to_string(i), ph.p_offset + ph.p_filesz, size);
  }

  // Sections are not needed to map the file, but a table that points past the end is the
  // mark of a file cut short where its segments happen to fit.
  if (eh.e_shnum > 0) {
    if (eh.e_shentsize != sizeof(Elf64_Shdr)) return "is damaged: unexpected section header size";
    if (!fits(eh.e_shoff, eh.e_shnum, sizeof(Elf64_Shdr), size))
      return truncated("the section header table", eh.e_shoff + uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr), size);
    for (uint16_t i = 0; i < eh.e_shnum; ++i) {
      Elf64_Shdr sh;
      if (!readAt(f.fd, &sh, sizeof(sh), eh.e_shoff + uint64_t(i) * sizeof(sh)))
        return "cannot be read (section header " + std::to_string(i) + ")";
      if (sh.sh_type != SHT_NOBITS && sh.sh_size > 0 && !fits(sh.sh_offset, 1, sh.sh_size, size))
        return truncated("section " + std::to_string(i), sh.sh_offset + sh.sh_size, size);
    }
  }
  return "";
}

}  // namespace brisk
