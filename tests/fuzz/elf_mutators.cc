#include "tests/fuzz/elf_mutators.h"

#include <elf.h>

#include <cstring>
#include <stdexcept>
#include <vector>

namespace brisk::fuzz {
namespace {

struct Region {
  const char* name;
  uint64_t begin, end;  // [begin, end) in the file
};

// A field of a header: where it is and how wide (1, 2, 4 or 8 bytes).
struct Field {
  std::string name;
  uint64_t offset;
  int width;
};

struct Layout {
  Elf64_Ehdr eh;
  std::vector<Region> regions;  // ELF header, program headers, section headers, dynamic
  std::vector<Field> fields;
  uint64_t dynamic_offset = 0, dynamic_size = 0;
};

template <typename T>
T readAt(const std::string& bytes, uint64_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

#define BRISK_FIELD(list, prefix, base, type, member) \
  list.push_back({std::string(prefix) + #member, (base) + offsetof(type, member), int(sizeof(type::member))})

Layout layoutOf(const std::string& seed) {
  if (seed.size() < sizeof(Elf64_Ehdr) || std::memcmp(seed.data(), ELFMAG, SELFMAG) != 0 ||
      seed[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error("elf mutators: the seed is not a 64-bit ELF file");
  Layout l;
  l.eh = readAt<Elf64_Ehdr>(seed, 0);
  const Elf64_Ehdr& eh = l.eh;
  const uint64_t ph_end = eh.e_phoff + uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr);
  const uint64_t sh_end = eh.e_shoff + uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr);
  if (ph_end > seed.size() || sh_end > seed.size()) throw std::runtime_error("elf mutators: damaged seed");
  l.regions = {{"ELF header", 0, sizeof(Elf64_Ehdr)},
               {"program headers", eh.e_phoff, ph_end},
               {"section headers", eh.e_shoff, sh_end}};
  l.fields.push_back({"e_ident[EI_CLASS]", EI_CLASS, 1});
  l.fields.push_back({"e_ident[EI_DATA]", EI_DATA, 1});
  l.fields.push_back({"e_ident[EI_VERSION]", EI_VERSION, 1});
  BRISK_FIELD(l.fields, "", 0, Elf64_Ehdr, e_type);
  BRISK_FIELD(l.fields, "", 0, Elf64_Ehdr, e_machine);
  BRISK_FIELD(l.fields, "", 0, Elf64_Ehdr, e_entry);
  BRISK_FIELD(l.fields, "", 0, Elf64_Ehdr, e_phoff);
  BRISK_FIELD(l.fields, "", 0, Elf64_Ehdr, e_shoff);
  BRISK_FIELD(l.fields, "", 0, Elf64_Ehdr, e_ehsize);
  BRISK_FIELD(l.fields, "", 0, Elf64_Ehdr, e_phentsize);
  BRISK_FIELD(l.fields, "", 0, Elf64_Ehdr, e_phnum);
  BRISK_FIELD(l.fields, "", 0, Elf64_Ehdr, e_shentsize);
  BRISK_FIELD(l.fields, "", 0, Elf64_Ehdr, e_shnum);
  BRISK_FIELD(l.fields, "", 0, Elf64_Ehdr, e_shstrndx);
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    const uint64_t at = eh.e_phoff + uint64_t(i) * sizeof(Elf64_Phdr);
    const std::string p = "phdr[" + std::to_string(i) + "].";
    BRISK_FIELD(l.fields, p, at, Elf64_Phdr, p_type);
    BRISK_FIELD(l.fields, p, at, Elf64_Phdr, p_flags);
    BRISK_FIELD(l.fields, p, at, Elf64_Phdr, p_offset);
    BRISK_FIELD(l.fields, p, at, Elf64_Phdr, p_vaddr);
    BRISK_FIELD(l.fields, p, at, Elf64_Phdr, p_filesz);
    BRISK_FIELD(l.fields, p, at, Elf64_Phdr, p_memsz);
    BRISK_FIELD(l.fields, p, at, Elf64_Phdr, p_align);
    const auto ph = readAt<Elf64_Phdr>(seed, at);
    if (ph.p_type == PT_DYNAMIC) {
      l.dynamic_offset = ph.p_offset;
      l.dynamic_size = ph.p_filesz;
    }
  }
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    const uint64_t at = eh.e_shoff + uint64_t(i) * sizeof(Elf64_Shdr);
    const std::string p = "shdr[" + std::to_string(i) + "].";
    BRISK_FIELD(l.fields, p, at, Elf64_Shdr, sh_name);
    BRISK_FIELD(l.fields, p, at, Elf64_Shdr, sh_type);
    BRISK_FIELD(l.fields, p, at, Elf64_Shdr, sh_offset);
    BRISK_FIELD(l.fields, p, at, Elf64_Shdr, sh_size);
    BRISK_FIELD(l.fields, p, at, Elf64_Shdr, sh_link);
    BRISK_FIELD(l.fields, p, at, Elf64_Shdr, sh_entsize);
  }
  if (l.dynamic_size > 0 && l.dynamic_offset + l.dynamic_size <= seed.size()) {
    l.regions.push_back({"dynamic section", l.dynamic_offset, l.dynamic_offset + l.dynamic_size});
    for (uint64_t i = 0; (i + 1) * sizeof(Elf64_Dyn) <= l.dynamic_size; ++i) {
      const uint64_t at = l.dynamic_offset + i * sizeof(Elf64_Dyn);
      const auto d = readAt<Elf64_Dyn>(seed, at);
      const std::string p = "dyn[" + std::to_string(i) + "] (tag " + std::to_string(d.d_tag) + ").";
      BRISK_FIELD(l.fields, p, at, Elf64_Dyn, d_tag);
      l.fields.push_back({p + "d_val", at + offsetof(Elf64_Dyn, d_un), 8});
      if (d.d_tag == DT_NULL) break;
    }
  }
  return l;
}

#undef BRISK_FIELD

uint64_t readField(const std::string& bytes, const Field& f) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + f.offset, f.width);  // little-endian host, as the check
  return v;
}

void writeField(std::string& bytes, const Field& f, uint64_t v) { std::memcpy(&bytes[f.offset], &v, f.width); }

// Values that put a field out of range, or just beside its valid value.
uint64_t hostileValue(uint64_t old, uint64_t file_size, const Field& f, Rng& rng) {
  const uint64_t all_ones = f.width == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * f.width)) - 1;
  switch (rng.below(12)) {
    case 0: return 0;
    case 1: return all_ones;
    case 2: return file_size;
    case 3: return file_size + 1 + rng.below(1 << 16);
    case 4: return file_size - 1 - rng.below(64);
    case 5: return uint64_t{1} << (8 * f.width - 1);
    case 6: return old + 1;
    case 7: return old - 1;
    case 8: return old * 2 + 1;
    case 9: return old ^ (uint64_t{1} << rng.below(8 * f.width));
    case 10: return rng.below(256);
    default: return rng.next();
  }
}

}  // namespace

Mutation mutateElfFile(const std::string& seed, Rng& rng) {
  const Layout l = layoutOf(seed);
  const uint64_t size = seed.size();
  Mutation m;
  m.bytes = seed;
  switch (rng.below(10)) {
    case 0:
    case 1:
    case 2: {  // truncation: inside a header region, a segment, or anywhere
      uint64_t keep;
      std::string where;
      const size_t pick = rng.below(l.regions.size() + 2);
      if (pick < l.regions.size()) {
        const Region& r = l.regions[pick];
        keep = r.begin + rng.below(r.end - r.begin + 1);
        where = std::string("inside the ") + r.name;
      } else if (pick == l.regions.size()) {
        // Inside one of the PT_LOAD segments (their ends are where the loader faults).
        const uint16_t i = static_cast<uint16_t>(rng.below(l.eh.e_phnum));
        const auto ph = readAt<Elf64_Phdr>(seed, l.eh.e_phoff + uint64_t(i) * sizeof(Elf64_Phdr));
        keep = std::min<uint64_t>(size - 1, ph.p_offset + rng.below(ph.p_filesz + 1));
        where = "inside segment " + std::to_string(i);
      } else {
        keep = rng.below(size);
        where = "anywhere";
      }
      m.bytes.resize(keep);
      m.description = "truncated to " + std::to_string(keep) + " of " + std::to_string(size) + " bytes (" + where + ")";
      break;
    }
    case 3:
    case 4: {  // bit flips inside one header region
      const Region& r = l.regions[rng.below(l.regions.size())];
      const int flips = 1 + static_cast<int>(rng.below(3));
      m.description = std::string("bit flips in the ") + r.name + ":";
      for (int k = 0; k < flips; ++k) {
        const uint64_t at = r.begin + rng.below(r.end - r.begin);
        const int bit = static_cast<int>(rng.below(8));
        m.bytes[at] = static_cast<char>(m.bytes[at] ^ (1 << bit));
        m.description += " byte " + std::to_string(at) + " bit " + std::to_string(bit);
      }
      break;
    }
    case 5: {  // a segment that ends past the file: p_filesz or p_offset pushed out
      const uint16_t i = static_cast<uint16_t>(rng.below(l.eh.e_phnum));
      const uint64_t at = l.eh.e_phoff + uint64_t(i) * sizeof(Elf64_Phdr);
      auto ph = readAt<Elf64_Phdr>(seed, at);
      const uint64_t over = 1 + rng.below(1 << 20);
      if (rng.chance(50)) {
        ph.p_filesz = (ph.p_offset <= size ? size - ph.p_offset : 0) + over;
        m.description = "phdr[" + std::to_string(i) + "].p_filesz: p_offset + p_filesz " + std::to_string(over) +
                        " bytes past the end";
      } else {
        ph.p_offset = size - std::min(ph.p_filesz, size) + over;
        m.description = "phdr[" + std::to_string(i) + "].p_offset: segment " + std::to_string(over) +
                        " bytes past the end";
      }
      std::memcpy(&m.bytes[at], &ph, sizeof(ph));
      break;
    }
    case 6: {  // the identity: class, data, type, machine wrong
      static const struct {
        Field field;
        uint64_t value;
        const char* what;
      } kWrong[] = {{{"e_ident[EI_CLASS]", EI_CLASS, 1}, ELFCLASS32, "32-bit class"},
                    {{"e_ident[EI_DATA]", EI_DATA, 1}, ELFDATA2MSB, "big-endian"},
                    {{"e_type", offsetof(Elf64_Ehdr, e_type), 2}, ET_EXEC, "an executable"},
                    {{"e_type", offsetof(Elf64_Ehdr, e_type), 2}, ET_REL, "an object file"},
                    {{"e_type", offsetof(Elf64_Ehdr, e_type), 2}, ET_CORE, "a core file"},
                    {{"e_machine", offsetof(Elf64_Ehdr, e_machine), 2}, EM_PPC64, "PowerPC 64"},
                    {{"e_machine", offsetof(Elf64_Ehdr, e_machine), 2}, EM_386, "i386"}};
      const auto& w = kWrong[rng.below(sizeof(kWrong) / sizeof(kWrong[0]))];
      writeField(m.bytes, w.field, w.value);
      m.description = w.field.name + " = " + std::to_string(w.value) + " (" + w.what + ")";
      break;
    }
    default: {  // one field of a header or a dynamic entry overwritten
      // Half of these hit the ELF header and the dynamic section, which are few fields
      // among hundreds of section header fields but what the loader reads first.
      std::vector<const Field*> pool;
      const bool focused = rng.chance(50);
      for (const Field& f : l.fields)
        if (!focused || f.name.rfind("shdr", 0) != 0) pool.push_back(&f);
      const Field& f = *pool[rng.below(pool.size())];
      const uint64_t old = readField(seed, f);
      const uint64_t v = hostileValue(old, size, f, rng);
      writeField(m.bytes, f, v);
      m.description = f.name + ": " + std::to_string(old) + " -> " + std::to_string(readField(m.bytes, f));
      break;
    }
  }
  return m;
}

}  // namespace brisk::fuzz
