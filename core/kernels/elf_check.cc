#include "core/kernels/elf_check.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

namespace brisk {
namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr const char* kHostMachineName = "x86-64";
constexpr uint32_t kRelativeReloc = R_X86_64_RELATIVE;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr const char* kHostMachineName = "AArch64";
constexpr uint32_t kRelativeReloc = R_AARCH64_RELATIVE;
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

// A PT_LOAD segment: where its file bytes go in the library's address space.
struct Load {
  uint64_t vaddr, memsz, offset, filesz;
  bool writable, executable;
};

// The load segment whose memory holds [addr, addr + len) (in its file-backed part when
// `in_file`: tables the loader reads must be there, not in the zero-filled rest).
const Load* segmentHolding(const std::vector<Load>& loads, uint64_t addr, uint64_t len, bool in_file) {
  for (const Load& l : loads) {
    const uint64_t extent = in_file ? l.filesz : l.memsz;
    if (addr >= l.vaddr && addr - l.vaddr <= extent && len <= extent - (addr - l.vaddr)) return &l;
  }
  return nullptr;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The GNU hash table ld.so sets up at dlopen and walks on every symbol lookup: its
// bloom filter size must be a power of two (ld.so asserts it), its arrays inside the
// segment, and every bucket's chain must end (an odd hash) inside the symbol table.
std::string gnuHashProblem(int fd, const std::vector<Load>& loads, std::map<int64_t, uint64_t>& tag,
                           uint64_t nsyms, uint64_t* count) {
  if (!tag.count(DT_GNU_HASH)) return "";
  const uint64_t addr = tag[DT_GNU_HASH];
  const Load* l = segmentHolding(loads, addr, 16, true);
  if (!l) return "GNU hash table lies outside its segments";
  const uint64_t off = l->offset + (addr - l->vaddr);
  const uint64_t room = l->filesz - (addr - l->vaddr);
  uint32_t h[4];  // nbuckets, symoffset, bloom words, bloom shift
  if (!readAt(fd, h, sizeof(h), off)) return "GNU hash table cannot be read";
  const uint64_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
  if (bloom == 0 || (bloom & (bloom - 1)) != 0) return "GNU hash table's bloom filter size is not a power of two";
  if (nbuckets == 0 || symoffset > nsyms) return "GNU hash table's header is out of range";
  const uint64_t buckets_at = 16 + bloom * 8, chains_at = buckets_at + nbuckets * 4;
  if (chains_at > room || (nsyms - symoffset) > (room - chains_at) / 4)
    return "GNU hash table is larger than its segment";
  std::vector<uint32_t> buckets(nbuckets), chains(nsyms - symoffset);
  if (!readAt(fd, buckets.data(), nbuckets * 4, off + buckets_at) ||
      (!chains.empty() && !readAt(fd, chains.data(), chains.size() * 4, off + chains_at)))
    return "GNU hash table cannot be read";
  *count = symoffset;  // the symbols: those before symoffset, and the last chain's end
  for (uint32_t b : buckets) {
    if (b == 0) continue;
    if (b < symoffset || b >= nsyms) return "GNU hash bucket names symbol " + std::to_string(b) + ", out of range";
    uint64_t i = b - symoffset;
    while (i < chains.size() && (chains[i] & 1) == 0) ++i;
    if (i >= chains.size()) return "GNU hash chain runs past its symbol table";
    *count = std::max(*count, symoffset + i + 1);
  }
  return "";
}

// A T at library address `addr`, from the segment whose file bytes hold it.
template <typename T>
bool readMapped(int fd, const std::vector<Load>& loads, uint64_t addr, T* out) {
  const Load* l = segmentHolding(loads, addr, sizeof(T), true);
  return l && readAt(fd, out, sizeof(T), l->offset + (addr - l->vaddr));
}

// Symbol versions, which ld.so resolves at dlopen: the version definitions and needs
// are linked lists it follows by their next/aux offsets (each node must be inside the
// library, its names inside the string table), and each symbol's version index
// (DT_VERSYM) indexes the table built from them, unchecked.
std::string versionProblem(int fd, const std::vector<Load>& loads, std::map<int64_t, uint64_t>& tag,
                           uint64_t strsz, uint64_t nsyms) {
  uint64_t max_index = 1;  // 0 and 1: local and global, always valid
  for (const bool def : {true, false}) {
    const int64_t addr_tag = def ? DT_VERDEF : DT_VERNEED, num_tag = def ? DT_VERDEFNUM : DT_VERNEEDNUM;
    if (!tag.count(addr_tag)) continue;
    if (!tag.count(num_tag) || tag[num_tag] > 0xffff) return "version table's entry count is missing or damaged";
    uint64_t at = tag[addr_tag];
    for (uint64_t n = 0; n < tag[num_tag]; ++n) {
      uint16_t version, cnt;
      uint32_t aux, next, name = 0;
      if (def) {
        Elf64_Verdef vd;
        if (!readMapped(fd, loads, at, &vd)) return "version definition lies outside its segments";
        version = vd.vd_version, cnt = vd.vd_cnt, aux = vd.vd_aux, next = vd.vd_next;
        max_index = std::max<uint64_t>(max_index, vd.vd_ndx & 0x7fff);
      } else {
        Elf64_Verneed vn;
        if (!readMapped(fd, loads, at, &vn)) return "version need lies outside its segments";
        version = vn.vn_version, cnt = vn.vn_cnt, aux = vn.vn_aux, next = vn.vn_next, name = vn.vn_file;
      }
      if (version != 1 || name >= strsz) return "version table entry " + std::to_string(n) + " is damaged";
      uint64_t a = at + aux;
      for (uint16_t k = 0; k < cnt; ++k) {
        uint32_t aux_name, aux_next;
        if (def) {
          Elf64_Verdaux vda;
          if (!readMapped(fd, loads, a, &vda)) return "version definition name lies outside its segments";
          aux_name = vda.vda_name, aux_next = vda.vda_next;
        } else {
          Elf64_Vernaux vna;
          if (!readMapped(fd, loads, a, &vna)) return "version need entry lies outside its segments";
          aux_name = vna.vna_name, aux_next = vna.vna_next;
          max_index = std::max<uint64_t>(max_index, vna.vna_other & 0x7fff);
        }
        if (aux_name >= strsz) return "version name is past its string table";
        if (aux_next == 0) break;
        a += aux_next;
      }
      if (next == 0) break;
      at += next;
    }
  }
  if (!tag.count(DT_VERSYM)) {
    if (tag.count(DT_VERDEF) || tag.count(DT_VERNEED)) return "symbol versions are missing (no DT_VERSYM)";
    return "";
  }
  if (!segmentHolding(loads, tag[DT_VERSYM], nsyms * 2, true)) return "symbol versions lie outside its segments";
  const Load* l = segmentHolding(loads, tag[DT_VERSYM], nsyms * 2, true);
  std::vector<uint16_t> versym(nsyms);
  if (nsyms && !readAt(fd, versym.data(), nsyms * 2, l->offset + (tag[DT_VERSYM] - l->vaddr)))
    return "symbol versions cannot be read";
  for (uint64_t i = 0; i < nsyms; ++i)
    if ((versym[i] & 0x7fff) > max_index)
      return "symbol " + std::to_string(i) + " has version " + std::to_string(versym[i] & 0x7fff) + ", past its " +
             std::to_string(max_index) + " versions";
  return "";
}

// A library that still has its section headers describes each table twice: in its
// section (address, size) and in its dynamic entries, which ld.so trusts. Damage to one
// makes them disagree where no single bound can tell (DT_INIT moved inside the code,
// DT_PLTRELSZ shrunk, a relocation count cut), so they must agree.
std::string sectionsDisagree(std::map<int64_t, uint64_t>& tag, const std::vector<Elf64_Shdr>& sections,
                             const std::string& names) {
  auto name = [&](const Elf64_Shdr& sh) {
    return sh.sh_name < names.size() ? std::string(names.c_str() + sh.sh_name) : std::string();
  };
  auto agree = [&](int64_t addr_tag, int64_t size_tag, const Elf64_Shdr& sh, const char* what) -> std::string {
    if (!tag.count(addr_tag)) return "";
    if (tag[addr_tag] != sh.sh_addr || (size_tag && tag.count(size_tag) && tag[size_tag] != sh.sh_size))
      return std::string(what) + " entry disagrees with its section header";
    return "";
  };
  for (const Elf64_Shdr& sh : sections) {
    std::string p;
    switch (sh.sh_type) {
      case SHT_DYNSYM: p = agree(DT_SYMTAB, 0, sh, "DT_SYMTAB");
        if (p.empty() && sh.sh_link < sections.size()) p = agree(DT_STRTAB, DT_STRSZ, sections[sh.sh_link], "DT_STRTAB");
        break;
      case SHT_GNU_HASH: p = agree(DT_GNU_HASH, 0, sh, "DT_GNU_HASH"); break;
      case SHT_HASH: p = agree(DT_HASH, 0, sh, "DT_HASH"); break;
      case SHT_INIT_ARRAY: p = agree(DT_INIT_ARRAY, DT_INIT_ARRAYSZ, sh, "DT_INIT_ARRAY"); break;
      case SHT_FINI_ARRAY: p = agree(DT_FINI_ARRAY, DT_FINI_ARRAYSZ, sh, "DT_FINI_ARRAY"); break;
      case SHT_GNU_versym: p = agree(DT_VERSYM, 0, sh, "DT_VERSYM"); break;
      case SHT_GNU_verneed: p = agree(DT_VERNEED, 0, sh, "DT_VERNEED"); break;
      case SHT_GNU_verdef: p = agree(DT_VERDEF, 0, sh, "DT_VERDEF"); break;
      case SHT_RELA:
        if (name(sh) == ".rela.plt") p = agree(DT_JMPREL, DT_PLTRELSZ, sh, "DT_JMPREL");
        else if (name(sh) == ".rela.dyn") p = agree(DT_RELA, DT_RELASZ, sh, "DT_RELA");
        break;
      case SHT_PROGBITS:
        if (name(sh) == ".init") p = agree(DT_INIT, 0, sh, "DT_INIT");
        else if (name(sh) == ".fini") p = agree(DT_FINI, 0, sh, "DT_FINI");
        break;
      default: break;
    }
    if (!p.empty()) return p;
  }
  return "";
}

// The dynamic section is what dlopen reads before it can report anything: its address
// tags are pointers into the mapped library that ld.so follows without checking, its
// tables (relocations, strings) are walked to their stated sizes, and a relocation
// writes wherever its r_offset says. Each must point inside the library's own segments.
std::string dynamicProblem(int fd, const std::vector<Load>& loads, const Elf64_Phdr& dyn_ph,
                           const std::vector<Elf64_Shdr>& sections, const std::string& section_names) {
  const Load* seg = segmentHolding(loads, dyn_ph.p_vaddr, dyn_ph.p_filesz, true);
  if (!seg) return "is damaged: its dynamic section (at " + hex(dyn_ph.p_vaddr) + ") is outside its segments";
  // ld.so reads the array in memory (the segment's bytes), up to its DT_NULL entry.
  const uint64_t dyn_off = seg->offset + (dyn_ph.p_vaddr - seg->vaddr);
  const uint64_t max_entries = (seg->filesz - (dyn_ph.p_vaddr - seg->vaddr)) / sizeof(Elf64_Dyn);
  std::vector<Elf64_Dyn> dyn;
  for (uint64_t i = 0;; ++i) {
    if (i >= max_entries) return "is damaged: its dynamic section has no end (DT_NULL) inside its segment";
    Elf64_Dyn d;
    if (!readAt(fd, &d, sizeof(d), dyn_off + i * sizeof(d))) return "cannot be read (dynamic section)";
    if (d.d_tag == DT_NULL) break;
    dyn.push_back(d);
  }
  std::map<int64_t, uint64_t> tag;  // the last value of each tag (what ld.so keeps)
  for (const Elf64_Dyn& d : dyn) tag[d.d_tag] = d.d_un.d_val;
  auto has = [&](int64_t t) { return tag.count(t) > 0; };
  auto bad = [](const std::string& what) { return "is damaged: its dynamic section's " + what; };

  // Pointers to tables of a stated size: inside one segment's file bytes.
  const struct {
    int64_t addr, size;
    const char* name;
  } kTables[] = {{DT_STRTAB, DT_STRSZ, "string table"},        {DT_RELA, DT_RELASZ, "relocations"},
                 {DT_JMPREL, DT_PLTRELSZ, "PLT relocations"},   {DT_INIT_ARRAY, DT_INIT_ARRAYSZ, "init array"},
                 {DT_FINI_ARRAY, DT_FINI_ARRAYSZ, "fini array"}, {DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ, "preinit array"},
                 {DT_REL, DT_RELSZ, "REL relocations"},          {DT_RELR, DT_RELRSZ, "RELR relocations"}};
  for (const auto& t : kTables) {
    if (has(t.addr) != has(t.size) && t.addr != DT_STRTAB)
      return bad(std::string(t.name) + " has an address without a size or a size without an address");
    if (has(t.addr) && !segmentHolding(loads, tag[t.addr], has(t.size) ? tag[t.size] : 0, true))
      return bad(std::string(t.name) + " (" + hex(tag[t.addr]) + ", " + std::to_string(has(t.size) ? tag[t.size] : 0) +
                 " bytes) lies outside its segments");
  }
  // Other pointers: at least their first bytes inside the library.
  for (int64_t t : {DT_SYMTAB, DT_HASH, DT_GNU_HASH, DT_INIT, DT_FINI, DT_VERSYM, DT_VERDEF, DT_VERNEED, DT_PLTGOT}) {
    if (has(t) && !segmentHolding(loads, tag[t], 8, true))
      return bad("tag " + std::to_string(t) + " points at " + hex(tag[t]) + ", outside its segments");
  }
  if (!has(DT_STRTAB) || !has(DT_SYMTAB)) return bad("string or symbol table is missing");
  if (has(DT_JMPREL) && tag[DT_PLTRELSZ] == 0) return bad("PLT relocations are empty");  // linkers omit DT_JMPREL then
  if (has(DT_RELACOUNT) && (!has(DT_RELASZ) || tag[DT_RELACOUNT] > tag[DT_RELASZ] / sizeof(Elf64_Rela)))
    return bad("DT_RELACOUNT is more than its relocations");  // ld.so: "Inconsistency detected", exit 127
  if (std::string p = sectionsDisagree(tag, sections, section_names); !p.empty()) return bad(p);
  // ld.so reads these entries' companions through a pointer it does not test for null.
  for (const auto& [t, companion] : {std::pair<int64_t, int64_t>{DT_RELA, DT_RELAENT}, {DT_REL, DT_RELENT},
                                     {DT_JMPREL, DT_PLTREL}, {DT_RELR, DT_RELRENT}})
    if (has(t) && !has(companion))
      return bad("entry " + std::to_string(t) + " lacks its companion entry " + std::to_string(companion));
  if (!has(DT_HASH) && !has(DT_GNU_HASH)) return bad("symbol hash table is missing");
  if (has(DT_SYMENT) && tag[DT_SYMENT] != sizeof(Elf64_Sym)) return bad("symbol entry size is wrong");
  if (has(DT_RELAENT) && tag[DT_RELAENT] != sizeof(Elf64_Rela)) return bad("relocation entry size is wrong");
  if (has(DT_PLTREL) && tag[DT_PLTREL] != DT_RELA && tag[DT_PLTREL] != DT_REL) return bad("DT_PLTREL is wrong");
  if (has(DT_RELASZ) && tag[DT_RELASZ] % sizeof(Elf64_Rela) != 0) return bad("relocation table size is wrong");
  if (has(DT_PLTRELSZ) && tag[DT_PLTRELSZ] % sizeof(Elf64_Rela) != 0) return bad("PLT relocation size is wrong");
  const uint64_t strsz = has(DT_STRSZ) ? tag[DT_STRSZ] : 0;
  for (const Elf64_Dyn& d : dyn)
    if ((d.d_tag == DT_NEEDED || d.d_tag == DT_SONAME || d.d_tag == DT_RPATH || d.d_tag == DT_RUNPATH) &&
        d.d_un.d_val >= strsz)
      return bad("name at string " + std::to_string(d.d_un.d_val) + " is past its string table (" +
                 std::to_string(strsz) + " bytes)");

  // Every relocation writes inside a writable segment (or any, with text relocations)
  // and names a symbol that lies in the symbol table's segment, its name in the strings.
  const bool textrel = has(DT_TEXTREL) || (has(DT_FLAGS) && (tag[DT_FLAGS] & DF_TEXTREL));
  const Load* symseg = segmentHolding(loads, tag[DT_SYMTAB], 0, true);
  const uint64_t nsyms = (symseg->vaddr + symseg->filesz - tag[DT_SYMTAB]) / sizeof(Elf64_Sym);
  const uint64_t sym_off = symseg->offset + (tag[DT_SYMTAB] - symseg->vaddr);
  std::map<uint64_t, int64_t> relative;  // r_offset -> addend of the RELATIVE relocations
  std::map<uint64_t, uint64_t> symbolic;  // r_offset -> symbol of the relocations to a symbol
  for (const auto& [addr_tag, size_tag] : {std::pair<int64_t, int64_t>{DT_RELA, DT_RELASZ}, {DT_JMPREL, DT_PLTRELSZ}}) {
    if (!has(addr_tag)) continue;
    const Load* rs = segmentHolding(loads, tag[addr_tag], tag[size_tag], true);
    std::vector<Elf64_Rela> rel(tag[size_tag] / sizeof(Elf64_Rela));
    if (!rel.empty() &&
        !readAt(fd, rel.data(), rel.size() * sizeof(Elf64_Rela), rs->offset + (tag[addr_tag] - rs->vaddr)))
      return "cannot be read (relocations)";
    for (size_t i = 0; i < rel.size(); ++i) {
      const Load* target = segmentHolding(loads, rel[i].r_offset, 8, false);
      if (!target || (!target->writable && !textrel))
        return bad("relocation " + std::to_string(i) + " writes to " + hex(rel[i].r_offset) +
                   ", outside its writable segments");
      const uint64_t sym = ELF64_R_SYM(rel[i].r_info);
      if (sym == 0) continue;
      if (sym >= nsyms) return bad("relocation " + std::to_string(i) + " names symbol " + std::to_string(sym) +
                                   ", past its symbol table");
      Elf64_Sym s;
      if (!readAt(fd, &s, sizeof(s), sym_off + sym * sizeof(s))) return "cannot be read (symbols)";
      if (s.st_name >= strsz) return bad("symbol " + std::to_string(sym) + "'s name is past its string table");
    }
    for (const Elf64_Rela& r : rel) {
      if (ELF64_R_TYPE(r.r_info) == kRelativeReloc) relative[r.r_offset] = r.r_addend;
      else if (ELF64_R_SYM(r.r_info) != 0) symbolic[r.r_offset] = ELF64_R_SYM(r.r_info);
    }
  }
  uint64_t symbols = 0;  // the exact count, from the hash table
  if (std::string p = gnuHashProblem(fd, loads, tag, nsyms, &symbols); !p.empty()) return bad(p);
  if (!has(DT_GNU_HASH)) {  // the SysV hash table: nbucket, nchain (= the symbol count)
    uint32_t h[2];
    if (!readMapped(fd, loads, tag[DT_HASH], &h) || h[1] > nsyms ||
        !segmentHolding(loads, tag[DT_HASH], 8 + (uint64_t(h[0]) + h[1]) * 4, true))
      return bad("symbol hash table is damaged");
    symbols = h[1];
  }
  if (std::string p = versionProblem(fd, loads, tag, strsz, symbols); !p.empty()) return bad(p);

  // Code ld.so calls before dlopen returns (DT_INIT, the init arrays' entries, as
  // relocated) must be in an executable segment: a pointer anywhere else is a jump into data.
  auto executable = [&](uint64_t addr) {
    const Load* l = segmentHolding(loads, addr, 1, true);
    return l && l->executable;
  };
  if (has(DT_INIT) && !executable(tag[DT_INIT])) return bad("DT_INIT is not in an executable segment");
  for (const auto& [addr_tag, size_tag] :
       {std::pair<int64_t, int64_t>{DT_INIT_ARRAY, DT_INIT_ARRAYSZ}, {DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ}}) {
    if (!has(addr_tag)) continue;
    const Load* l = segmentHolding(loads, tag[addr_tag], tag[size_tag], true);
    for (uint64_t at = tag[addr_tag]; at + 8 <= tag[addr_tag] + tag[size_tag]; at += 8) {
      // ld.so calls every entry, 0 included; one bound to a symbol must be bound to a
      // function (a vtable or type_info there is data).
      if (auto it = symbolic.find(at); it != symbolic.end()) {
        Elf64_Sym sym;
        if (!readAt(fd, &sym, sizeof(sym), sym_off + it->second * sizeof(sym))) return "cannot be read (symbols)";
        if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC && ELF64_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
          return bad("init function at " + hex(at) + " is bound to symbol " + std::to_string(it->second) +
                     ", which is not a function");
        continue;
      }
      uint64_t fn = 0;
      if (auto it = relative.find(at); it != relative.end()) fn = static_cast<uint64_t>(it->second);
      else if (!readAt(fd, &fn, sizeof(fn), l->offset + (at - l->vaddr))) return "cannot be read (init array)";
      if (!executable(fn))
        return bad("init function at " + hex(at) + " (" + hex(fn) + ") is not in an executable segment");
    }
  }
  return "";
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
  std::vector<Load> loads;
  std::optional<Elf64_Phdr> dynamic;
  std::vector<Elf64_Phdr> others;  // PT_PHDR, PT_GNU_RELRO
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!readAt(f.fd, &ph, sizeof(ph), eh.e_phoff + uint64_t(i) * sizeof(ph)))
      return "cannot be read (program header " + std::to_string(i) + ")";
    if (ph.p_filesz > 0 && !fits(ph.p_offset, 1, ph.p_filesz, size))
      return truncated("segment " + std::to_string(i), ph.p_offset + ph.p_filesz, size);
    if (ph.p_type == PT_LOAD) {
      // ld.so reads its tables from the mapped segments: one mapped without read
      // permission faults at the first read.
      if (!(ph.p_flags & PF_R)) return "is damaged: segment " + std::to_string(i) + " is not readable";
      if (ph.p_memsz < ph.p_filesz)
        return "is damaged: segment " + std::to_string(i) + " has fewer bytes in memory than in the file";
      if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr) return "is damaged: segment " + std::to_string(i) + " wraps around";
      loads.push_back({ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, (ph.p_flags & PF_W) != 0,
                       (ph.p_flags & PF_X) != 0});
    } else if (ph.p_type == PT_DYNAMIC) {
      dynamic = ph;
    } else if (ph.p_type == PT_PHDR || ph.p_type == PT_GNU_RELRO) {
      others.push_back(ph);
    }
  }
  if (loads.empty()) return "is damaged: it has no loadable segments";
  if (!dynamic) return "is damaged: it has no dynamic section";
  // ld.so finds the program headers in memory through PT_PHDR, and mprotects the
  // PT_GNU_RELRO range after relocating: both must be the library's own mapped bytes.
  for (const Elf64_Phdr& ph : others) {
    const Load* l = segmentHolding(loads, ph.p_vaddr, ph.p_memsz, ph.p_type == PT_PHDR);
    if (!l || (ph.p_type == PT_PHDR && (ph.p_offset != eh.e_phoff || ph.p_vaddr - l->vaddr != ph.p_offset - l->offset)))
      return std::string("is damaged: its ") + (ph.p_type == PT_PHDR ? "PT_PHDR" : "PT_GNU_RELRO") +
             " segment is not where its loadable segments put it";
  }

  // Sections are not needed to map the file, but a table that points past the end is the
  // mark of a file cut short where its segments happen to fit.
  std::vector<Elf64_Shdr> sections;
  std::string section_names;
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
      sections.push_back(sh);
    }
    if (eh.e_shstrndx < sections.size() && sections[eh.e_shstrndx].sh_type == SHT_STRTAB &&
        sections[eh.e_shstrndx].sh_size < (uint64_t{1} << 24)) {
      const Elf64_Shdr& names = sections[eh.e_shstrndx];
      section_names.resize(names.sh_size);
      if (!readAt(f.fd, section_names.data(), names.sh_size, names.sh_offset)) section_names.clear();
      section_names.push_back('\0');  // every name ends inside the string
    }
  }
  return dynamicProblem(f.fd, loads, *dynamic, sections, section_names);
}

}  // namespace brisk
