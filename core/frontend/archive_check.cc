#include "core/frontend/archive_check.h"

#include <caffe2/serialize/inline_container.h>

#include <sys/stat.h>

#include <cstdio>
#include <unordered_map>
#include <vector>

#include "core/frontend/file_error.h"
#include "core/frontend/pickle_scan.h"

namespace brisk {
namespace {

size_t fileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
}

bool endsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

size_t storageItemSize(const std::string& global) {
  static const std::unordered_map<std::string, size_t> sizes = {
      {"torch.FloatStorage", 4},     {"torch.DoubleStorage", 8},       {"torch.HalfStorage", 2},
      {"torch.BFloat16Storage", 2},  {"torch.LongStorage", 8},         {"torch.IntStorage", 4},
      {"torch.ShortStorage", 2},     {"torch.CharStorage", 1},         {"torch.ByteStorage", 1},
      {"torch.BoolStorage", 1},      {"torch.ComplexFloatStorage", 8}, {"torch.ComplexDoubleStorage", 16},
      {"torch.QInt8Storage", 1},     {"torch.QUInt8Storage", 1},       {"torch.QInt32Storage", 4},
      {"torch.QUInt4x2Storage", 1},  {"torch.QUInt2x4Storage", 1},     {"torch.UntypedStorage", 1},
  };
  auto it = sizes.find(global);
  return it == sizes.end() ? 0 : it->second;
}

// What every refusal of one archive says first.
struct ArchiveProblem {
  const std::string& file;
  bool is_model;
  Error operator()(const std::string& what) const { return fileError(file, is_model, "corrupt archive: " + what); }
};

// The scan of record `name` against what torch's Unpickler would do with it.
void checkPickle(const PickleScan& scan, const std::string& name, bool known_opcodes_only,
                 const ArchiveProblem& corrupt) {
  if (scan.depth > kMaxPickleNesting)
    throw corrupt("record '" + name + "' nests values " + std::to_string(scan.depth) + " levels deep (at most " +
                  std::to_string(kMaxPickleNesting) + " supported)");
  if (!scan.damage.empty())
    throw corrupt("record '" + name + "' is damaged at byte " + std::to_string(scan.damage_at) + ": " + scan.damage);
  // torch's importer unpickles .debug_pkl lazily, inside an exception's noexcept
  // what(): an opcode it does not know there is std::terminate, not an error.
  if (known_opcodes_only && scan.unknown_opcode) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02x", *scan.unknown_opcode);
    throw corrupt("record '" + name + "' has a pickle opcode TorchScript does not write (" + hex + " at byte " +
                  std::to_string(scan.unknown_at) + ")");
  }
}

// Storages are records next to the pickle: data.pkl -> data/<key>, constants.pkl ->
// constants/<key>. torch sizes a storage from the pickle's numel, not from its record,
// so a short record would be read past its end.
void checkStorages(caffe2::serialize::PyTorchStreamReader& reader, const PickleScan& scan, const std::string& dir,
                   const ArchiveProblem& corrupt) {
  for (const PickleScan::Storage& st : scan.storages) {
    const size_t item = storageItemSize(st.type);
    const std::string record = dir + "/" + st.key;
    if (st.numel < 0) throw corrupt("storage '" + record + "' has a negative size");
    if (item == 0 || st.numel == 0) continue;  // unknown type: torch refuses it itself
    size_t have = 0;
    try {
      if (!reader.hasRecord(record)) throw corrupt("storage record '" + record + "' is missing");
      have = reader.getRecordSize(record);  // the zip header's size: no read
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw corrupt("storage record '" + record + "' cannot be read: " + describeException(e));
    }
    const __int128 need = static_cast<__int128>(st.numel) * item;
    if (static_cast<__int128>(have) < need)
      throw corrupt("storage record '" + record + "' holds " + std::to_string(have) + " bytes, its pickle says " +
                    std::to_string(st.numel) + " x " + std::to_string(item));
  }
}

void checkArchiveRecords(caffe2::serialize::PyTorchStreamReader& reader, const std::string& file, bool is_model,
                         size_t archive_size) {
  const ArchiveProblem corrupt{file, is_model};
  std::vector<std::string> records;
  try {
    records = reader.getAllRecords();
  } catch (const std::exception&) {
    return;  // a damaged central directory: torch's reader says why when it loads
  }
  // Deflate expands at most ~1032:1, so a record claiming more than that over the whole
  // archive has a damaged header; torch would allocate what it claims (tens of GB) first.
  const __int128 max_record = static_cast<__int128>(archive_size) * 1032 + 4096;
  for (const std::string& name : records) {
    size_t claimed = 0;
    try {
      claimed = reader.getRecordSize(name);
    } catch (const std::exception&) {
      continue;  // unreadable header: torch's reader says why
    }
    if (static_cast<__int128>(claimed) > max_record)
      throw corrupt("record '" + name + "' claims " + std::to_string(claimed) + " bytes in a " +
                    std::to_string(archive_size) + "-byte archive");
    if (!endsWith(name, ".pkl") && !endsWith(name, ".debug_pkl")) continue;
    PickleScan scan;
    try {
      auto [data, size] = reader.getRecord(name);
      scan = scanPickle(std::string_view(static_cast<const char*>(data.get()), size));
    } catch (const std::exception&) {
      continue;  // an unreadable record (bad CRC, ...): torch's reader says why
    }
    checkPickle(scan, name, /*known_opcodes_only=*/is_model, corrupt);
    // Only these two pickles' storages are loaded: torch.jit.save itself writes
    // traced_inputs/<key> records empty.
    if (name == "data.pkl" || name == "constants.pkl") checkStorages(reader, scan, name.substr(0, name.rfind('.')), corrupt);
  }
}

}  // namespace

void checkArchivePickles(const std::string& path) {
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
  try {
    reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
  } catch (const std::exception&) {
    return;  // not a readable zip: torch::jit::load says why
  }
  checkArchiveRecords(*reader, path, /*is_model=*/true, fileSize(path));
}

void checkSavedArchive(caffe2::serialize::PyTorchStreamReader& reader, const std::string& file) {
  // Python's pickler (torch.save) writes opcodes TorchScript's never does; the reader
  // refuses the ones it lacks itself, outside any noexcept.
  checkArchiveRecords(reader, file, /*is_model=*/false, fileSize(file));
}

}  // namespace brisk
