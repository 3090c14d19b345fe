#pragma once
// A PT2 archive (torch.export.save / package_pt2): a PyTorch zip whose
// `archive_format` record is "pt2", holding one or more programs
// (`models/<name>.json`) and their weights and constants as raw storage bytes
// (`data/weights/weight_<i>`, `data/constants/tensor_<i>`) described by per-program
// payload configs. Errors are brisk::Errors without the model; the caller adds it.
#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/frontend/pt2/schema.h"

namespace caffe2::serialize {
class PyTorchStreamReader;
}

namespace brisk::pt2 {

// Decided by content, not by extension: a zip whose `archive_format` record says
// "pt2". A zip too damaged to open still counts when its bytes name PT2's records, so
// a truncated PT2 file is reported as one rather than as a bad TorchScript archive.
bool isPt2Archive(const std::string& path);

class Archive {
 public:
  explicit Archive(const std::string& path);  // checks the format and version records
  ~Archive();

  // Program names, sorted.
  const std::vector<std::string>& programs() const { return programs_; }
  // `requested` ("" = the only program, or "model" among several) or an error listing
  // the names.
  std::string choose(const std::string& requested) const;
  Json readJson(const std::string& record) const;
  // The program's parameters and persistent buffers (weights config) and its tensor
  // constants and non-persistent buffers (constants config), by state-dict name. Views
  // of one storage share it, as in the saved module.
  std::unordered_map<std::string, at::Tensor> loadTensors(const std::string& program);

  // Regions compiled ahead of time (NativeRT's AOTInductor delegate format): the
  // records under `data/aotinductor/<region>/`, sorted; empty when there are none.
  std::vector<std::string> aotiFiles(const std::string& region) const;
  // The program a delegate program was lowered from: package_nativert_with_aoti_delegate
  // names it "<model>-<backend id>" beside "<model>", whose weights its compiled regions
  // take as constants (their files: data/aotinductor/<program>/, or <program>.<i>/ per
  // region when only parts are compiled). "" when `program` is not such a program.
  std::string loweredFrom(const std::string& program) const;
  // A program's tensors (loadTensors), and for a delegate program also those of the
  // program it was lowered from that it does not hold itself.
  std::unordered_map<std::string, at::Tensor> programState(const std::string& program);

 private:
  void loadPayload(const std::string& folder, const std::string& config_record,
                   std::unordered_map<std::string, at::Tensor>& out);
  at::Tensor storageBytes(const std::string& record);

  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader_;
  std::vector<std::string> programs_;
  std::unordered_map<std::string, at::Tensor> storages_;  // record -> its bytes (kByte)
};

}  // namespace brisk::pt2
