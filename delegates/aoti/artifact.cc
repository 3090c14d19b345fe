#include "delegates/aoti/artifact.h"

#include <ATen/cpu/Utils.h>
#include <caffe2/serialize/inline_container.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "core/common/error.h"
#include "core/kernels/elf_check.h"

namespace brisk::aoti {
namespace {

std::string baseName(const std::string& record) { return record.substr(record.rfind('/') + 1); }

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The CPU flags the kernel reports; AOTInductor's ISA names map onto them below.
const std::string& cpuFlags() {
  static const std::string flags = [] {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("flags", 0) == 0) return " " + line.substr(line.find(':') + 1) + " ";
    return std::string();
  }();
  return flags;
}

bool hasFlags(std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (cpuFlags().find(std::string(" ") + n + " ") == std::string::npos) return false;
  return true;
}

// An ISA name of AOTI_CPU_ISA (torch._inductor.cpu_vec_isa: the instruction sets the
// code was compiled for) this CPU lacks; "" when it has them all.
std::string missingIsa(const std::string& isa) {
  std::istringstream words(isa);
  std::string w;
  while (words >> w) {
    bool ok;
    if (w == "AVX2") ok = hasFlags({"avx2", "fma"});
    else if (w == "AVX512") ok = hasFlags({"avx512f", "avx512bw", "avx512vl", "avx512dq"});
    else if (w == "AVX512_VNNI") ok = hasFlags({"avx512_vnni"});
    else if (w == "AVX512_BF16") ok = hasFlags({"avx512_bf16"});
    // AMX also needs the kernel's permission for the tile state, which init_amx asks.
    else if (w == "AMX_TILE") ok = hasFlags({"amx_tile", "amx_bf16", "amx_int8"}) && at::cpu::init_amx();
    else ok = false;  // not an x86 set brisk knows: it cannot tell, so it does not map the code
    if (!ok) return w;
  }
  return "";
}

std::string machine() {
  struct utsname u {};
  return uname(&u) == 0 ? u.machine : "";
}

}  // namespace

void Artifact::checkMetadata(const std::string& record, const std::string& text) {
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw Error("'" + record + "' is not valid JSON: " + e.what());
  }
  auto field = [&](const char* key) {
    auto it = meta.find(key);
    return it != meta.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto refuse = [&](const std::string& why) {
    throw Error("the compiled region '" + region_ + "' was built " + why + " ('" + record + "')");
  };
  if (const std::string d = field("AOTI_DEVICE_KEY"); !d.empty() && d != "cpu") refuse("for device '" + d + "'");
  if (const std::string p = field("AOTI_PLATFORM"); !p.empty() && p != "linux") refuse("for platform '" + p + "'");
  if (const std::string m = field("AOTI_MACHINE"); !m.empty() && m != machine())
    refuse("for machine " + m + ", and this one is " + machine());
  cpu_isa_ = field("AOTI_CPU_ISA");
  if (const std::string missing = missingIsa(cpu_isa_); !missing.empty())
    refuse("for CPUs with " + cpu_isa_ + ", and this CPU lacks " + missing + " (compile it on, or for, this machine)");
}

// In chunks: the library carries the region's own constants (tens of MiB for a conv
// net), and a copy of it in one piece would leave a hole of that size in the heap, which
// the first runs then fault back in.
void Artifact::writeLibrary(caffe2::serialize::PyTorchStreamReader& reader, const std::string& record) {
  // Below glibc's first mmap threshold (128 KiB): a freed mmapped buffer would raise the
  // threshold, and the runs' large blocks would then come from the heap, to stay.
  constexpr size_t kChunk = size_t{64} << 10;
  std::ofstream out(library_, std::ios::binary);
  try {
    auto chunks = reader.createChunkReaderIter(record, reader.getRecordSize(record), kChunk);
    std::vector<char> buf(kChunk);
    for (size_t n; (n = chunks.next(buf.data())) > 0;) out.write(buf.data(), static_cast<std::streamsize>(n));
  } catch (const std::exception& e) {
    throw Error("cannot read '" + record + "': " + describeException(e));
  }
  if (!out.flush()) throw Error("cannot write '" + library_ + "' (disk full?)");
}

void Artifact::extract() {
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
  try {
    reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(archive_);
  } catch (const std::exception& e) {
    throw Error("cannot read the archive: " + describeException(e));
  }
  const std::string prefix = "data/aotinductor/" + region_ + "/";
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/brisk-aoti-XXXXXX";
  if (!mkdtemp(templ.data())) throw Error("cannot make a directory for the compiled region in " + templ);
  dir_ = templ;
  for (const std::string& record : reader->getAllRecords()) {
    if (record.compare(0, prefix.size(), prefix) != 0) continue;
    const bool library = endsWith(record, ".so"), metadata = endsWith(record, "_metadata.json");
    if (!library && !metadata) continue;  // sources and build records: not needed to run
    if (metadata) {
      auto [data, size] = reader->getRecord(record);
      checkMetadata(record, std::string(static_cast<const char*>(data.get()), size));
      continue;
    }
    if (!library_.empty())
      throw Error("the compiled region '" + region_ + "' has two libraries ('" + library_record_ + "', '" + record +
                  "'): the archive does not match what the delegate program expects");
    library_ = dir_ + "/" + baseName(record);
    library_record_ = record;
    writeLibrary(*reader, record);
  }
  if (library_.empty())
    throw Error("the archive has no AOTInductor library for the compiled region '" + region_ + "' (no " + prefix +
                "*.so)");
  if (const std::string problem = elfSharedObjectProblem(library_); !problem.empty())
    throw Error("'" + library_record_ + "' cannot be loaded: it " + problem);
}

void Artifact::checkFoldedWeight(const std::string& name, const at::Tensor& value) const {
  const at::Tensor t = value.contiguous();
  const size_t print = std::hash<std::string_view>{}(
      std::string_view(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size()));
  std::lock_guard<std::mutex> lock(folded_mu_);
  auto [it, fresh] = folded_.try_emplace(name, print);
  if (!fresh && it->second != print)
    throw Error("weight '" + name + "' may be folded into the compiled region '" + region_ +
                "': AOTInductor made constants of its own when it compiled (freezing packs weights into its own "
                "copies), and no constant reads this weight in place, so a new value cannot reach it; lower the "
                "model again with the new weights");
}

Artifact::~Artifact() {
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

std::shared_ptr<const Artifact> Artifact::open(const std::string& archive, const std::string& region) {
  // Keyed by the file's identity and time too: a rewritten archive is new files.
  struct stat st {};
  if (stat(archive.c_str(), &st) != 0) throw Error("cannot read the archive '" + archive + "'");
  const std::string key = archive + '\n' + region + '\n' + std::to_string(st.st_ino) + ':' +
                          std::to_string(st.st_size) + ':' + std::to_string(st.st_mtim.tv_sec) + '.' +
                          std::to_string(st.st_mtim.tv_nsec);
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<const Artifact>> live;
  std::lock_guard<std::mutex> lock(mu);
  for (auto it = live.begin(); it != live.end();) it = it->second.expired() ? live.erase(it) : std::next(it);
  if (auto it = live.find(key); it != live.end())
    if (auto a = it->second.lock()) return a;
  std::shared_ptr<Artifact> a(new Artifact(archive, region));
  a->extract();
  live[key] = a;
  return a;
}

}  // namespace brisk::aoti
