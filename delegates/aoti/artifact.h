#pragma once
// The files AOTInductor compiled for one region of a NativeRT archive
// (`data/aotinductor/<region>/`), extracted into a private directory and checked
// before anything of them is mapped: the metadata says the files are for this
// device, platform, machine and CPU, and the library's ELF headers fit the file (a
// truncated .so is otherwise a SIGBUS inside dlopen).
//
// One Artifact serves every Module generation of an archive (a weight swap compiles a
// new generation over the same files): open() hands out the live one for the same
// archive file and region. The directory is removed when the last user lets go.
#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace caffe2::serialize {
class PyTorchStreamReader;
}  // namespace caffe2::serialize

namespace brisk::aoti {

class Artifact {
 public:
  // Throws brisk::Error (no model: the caller adds it) naming the archive, the region
  // and, where one is at fault, the file.
  static std::shared_ptr<const Artifact> open(const std::string& archive, const std::string& region);
  ~Artifact();
  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;

  const std::string& archive() const { return archive_; }
  const std::string& region() const { return region_; }
  // The extracted library, to load with AOTInductor's container runner.
  const std::string& library() const { return library_; }
  // The library's name inside the archive, for messages and `brisk inspect`.
  const std::string& libraryRecord() const { return library_record_; }
  // "AVX512 AVX512_VNNI", as the metadata records it.
  const std::string& cpuIsa() const { return cpu_isa_; }

  // A weight AOTInductor may have folded into one of the region's own constants when it
  // compiled (freezing packs weights into its own layout): the library holds a copy made
  // from the weight's value then, which no constant update can change. The first Module
  // generation's value of `name` (the archive's) is recorded; a later one with another
  // value (a weight swap) throws brisk::Error saying the region must be compiled again.
  void checkFoldedWeight(const std::string& name, const at::Tensor& value) const;

 private:
  Artifact(std::string archive, std::string region) : archive_(std::move(archive)), region_(std::move(region)) {}
  void extract();
  void writeLibrary(caffe2::serialize::PyTorchStreamReader& reader, const std::string& record);
  void checkMetadata(const std::string& record, const std::string& text);

  std::string archive_, region_;
  std::string dir_, library_, library_record_, cpu_isa_;
  mutable std::mutex folded_mu_;
  mutable std::map<std::string, size_t> folded_;  // weight name -> fingerprint of its first value
};

}  // namespace brisk::aoti
