#include "core/frontend/pt2/archive.h"

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/common/error.h"

namespace brisk::pt2 {
namespace {

using caffe2::serialize::PyTorchStreamReader;

std::string recordText(PyTorchStreamReader& r, const std::string& name) {
  auto [data, size] = r.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

// A damaged zip's central directory (at its end) is gone, but its local headers still
// carry the member names: PT2's own records name `archive_format` or its weights
// folder, which TorchScript archives never do.
bool namesPt2Records(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  if (!f.read(magic, 4) || std::memcmp(magic, "PK\x03\x04", 4) != 0) return false;
  static const std::string kMarkers[] = {"/archive_format", "/data/weights/weight_"};
  const size_t keep = kMarkers[1].size();
  std::string window;
  std::vector<char> chunk(1 << 20);
  while (f.read(chunk.data(), chunk.size()) || f.gcount() > 0) {
    window.append(chunk.data(), f.gcount());
    for (const std::string& m : kMarkers)
      if (window.find(m) != std::string::npos) return true;
    if (window.size() > keep) window.erase(0, window.size() - keep);
  }
  return false;
}

}  // namespace

bool isPt2Archive(const std::string& path) {
  try {
    PyTorchStreamReader r(path);
    return r.hasRecord("archive_format") && recordText(r, "archive_format") == "pt2";
  } catch (const std::exception&) {
    return namesPt2Records(path);
  }
}

Archive::Archive(const std::string& path) {
  try {
    reader_ = std::make_unique<PyTorchStreamReader>(path);
  } catch (const std::exception& e) {
    throw Error("corrupt or truncated PT2 archive: " + describeException(e));
  }
  if (!reader_->hasRecord("archive_format") || recordText(*reader_, "archive_format") != "pt2")
    throw Error("not a PT2 archive (no archive_format record saying \"pt2\")");
  if (reader_->hasRecord("archive_version")) {
    std::string v = recordText(*reader_, "archive_version");
    if (v != "0") throw Error("unsupported PT2 archive_version '" + v + "' (this brisk reads version 0)");
  }
  for (const std::string& name : reader_->getAllRecords()) {
    static const std::string kPrefix = "models/", kSuffix = ".json";
    if (name.size() > kPrefix.size() + kSuffix.size() && name.compare(0, kPrefix.size(), kPrefix) == 0 &&
        name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0 &&
        name.find('/', kPrefix.size()) == std::string::npos)
      programs_.push_back(name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size()));
  }
  std::sort(programs_.begin(), programs_.end());
  if (programs_.empty()) throw Error("the PT2 archive holds no program (no models/<name>.json)");
}

Archive::~Archive() = default;

std::string Archive::choose(const std::string& requested) const {
  auto has = [&](const std::string& n) { return std::find(programs_.begin(), programs_.end(), n) != programs_.end(); };
  if (!requested.empty() && has(requested)) return requested;
  if (requested.empty() && programs_.size() == 1) return programs_[0];
  if (requested.empty() && has("model")) return "model";
  std::string names;
  for (const auto& n : programs_) names += (names.empty() ? "'" : ", '") + n + "'";
  throw Error((requested.empty() ? std::string("the PT2 archive holds several programs")
                                 : "the PT2 archive has no program '" + requested + "'") +
              "; choose one with the pt2_program option: " + names);
}

Json Archive::readJson(const std::string& record) const {
  if (!reader_->hasRecord(record)) throw Error("the PT2 archive has no record '" + record + "'");
  const std::string text = recordText(*reader_, record);
  checkJsonDepth(text, "record '" + record + "'");
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    throw Error("record '" + record + "' is not valid JSON: " + e.what());
  }
}

at::Tensor Archive::storageBytes(const std::string& record) {
  auto it = storages_.find(record);
  if (it != storages_.end()) return it->second;
  if (!reader_->hasRecord(record)) throw Error("the PT2 archive has no record '" + record + "'");
  // Read into the tensor itself: a copy out of a buffer of the reader's would double the
  // load's peak, and leave a freed hole beside every weight for the runs to fault back in.
  const size_t size = reader_->getRecordSize(record);
  at::Tensor bytes = at::empty({static_cast<int64_t>(size)}, at::kByte);
  if (size && reader_->getRecord(record, bytes.data_ptr(), size) != size)
    throw Error("the PT2 archive's record '" + record + "' is shorter than its header says");
  storages_.emplace(record, bytes);
  return bytes;
}

std::unordered_map<std::string, at::Tensor> Archive::loadTensors(const std::string& program) {
  std::unordered_map<std::string, at::Tensor> out;
  loadPayload("data/weights/", "data/weights/" + program + "_weights_config.json", out);
  loadPayload("data/constants/", "data/constants/" + program + "_constants_config.json", out);
  return out;
}

std::vector<std::string> Archive::aotiFiles(const std::string& region) const {
  const std::string prefix = "data/aotinductor/" + region + "/";
  std::vector<std::string> out;
  for (const std::string& name : reader_->getAllRecords())
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

std::string Archive::loweredFrom(const std::string& program) const {
  // Its regions' files: `<program>/` for the whole program, `<program>.<i>/` for region i
  // of a partly delegated one (brisk.lower).
  const std::string whole = "data/aotinductor/" + program + "/", part = "data/aotinductor/" + program + ".";
  bool has_files = false;
  for (const std::string& name : reader_->getAllRecords())
    has_files = has_files || name.compare(0, whole.size(), whole) == 0 || name.compare(0, part.size(), part) == 0;
  if (!has_files) return "";
  std::string best;
  for (const std::string& p : programs_)
    if (p.size() + 1 < program.size() && program.compare(0, p.size(), p) == 0 && program[p.size()] == '-' &&
        p.size() > best.size())
      best = p;
  return best;
}

std::unordered_map<std::string, at::Tensor> Archive::programState(const std::string& program) {
  std::unordered_map<std::string, at::Tensor> state = loadTensors(program);
  if (const std::string original = loweredFrom(program); !original.empty())
    for (auto& [name, t] : loadTensors(original)) state.try_emplace(name, std::move(t));
  return state;
}

namespace {

std::vector<int64_t> concreteInts(const Json& list, const std::string& what) {
  if (!list.is_array()) throw Error(what + " is not a list");
  std::vector<int64_t> out;
  for (const Json& s : list) out.push_back(concreteInt(s, what));
  return out;
}

// The largest element index the view reads, plus one; -1 when it overflows or is
// malformed. 0 for an empty view.
int64_t elementsSpanned(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset) {
  if (sizes.size() != strides.size() || offset < 0) return -1;
  int64_t last = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || strides[i] < 0) return -1;
    if (sizes[i] == 0) return 0;
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t step = 0;
    if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &step) || __builtin_add_overflow(last, step, &last))
      return -1;
  }
  return last + 1;
}

}  // namespace

void Archive::loadPayload(const std::string& folder, const std::string& config_record,
                          std::unordered_map<std::string, at::Tensor>& out) {
  if (!reader_->hasRecord(config_record)) return;  // older writers omit an empty one
  Json config = readJson(config_record);
  const Json& entries = objectAt(config, "config", config_record);
  for (auto it = entries.begin(); it != entries.end(); ++it) {
    const std::string what = "'" + it.key() + "' in " + config_record;
    const Json& e = it.value();
    if (at(e, "use_pickle", what).is_boolean() && at(e, "use_pickle", what).get<bool>())
      throw Error(what + " is a pickled payload (tensor subclass or custom object): not supported");
    const Json& meta = objectAt(e, "tensor_meta", what);
    const std::string device = stringAt(objectAt(meta, "device", what), "type", what + ".device");
    if (device != "cpu")
      throw Error(what + " is on device '" + device + "': brisk runs CPU programs only (export on CPU)");
    if (layout(intOf(at(meta, "layout", what), what + ".layout")) != c10::kStrided)
      throw Error(what + " is not a strided tensor: not supported");
    const c10::ScalarType dtype = scalarType(intOf(at(meta, "dtype", what), what + ".dtype"));
    std::vector<int64_t> sizes = concreteInts(at(meta, "sizes", what), what + ".sizes");
    std::vector<int64_t> strides = concreteInts(at(meta, "strides", what), what + ".strides");
    int64_t offset = concreteInt(at(meta, "storage_offset", what), what + ".storage_offset");
    at::Tensor bytes = storageBytes(folder + stringAt(e, "path_name", what));
    const int64_t span = elementsSpanned(sizes, strides, offset);
    const int64_t elsize = static_cast<int64_t>(c10::elementSize(dtype));
    if (span < 0) throw Error(what + ": malformed sizes/strides/storage_offset");
    if (bytes.numel() == 0) {  // the writer stores an empty file for an all-zero view
      out[it.key()] = at::zeros(sizes, at::dtype(dtype));
      continue;
    }
    if (span > bytes.numel() / elsize)
      throw Error(what + ": the view needs " + std::to_string(span * elsize) + " bytes but its storage file has " +
                  std::to_string(bytes.numel()) + " (truncated or corrupt archive)");
    at::Tensor t = at::empty({0}, at::dtype(dtype));
    t.set_(bytes.storage(), offset, sizes, strides);
    out[it.key()] = t;
  }
}

}  // namespace brisk::pt2
