#pragma once
// Checks on what torch::jit::load produced from a user's archive, before anything reads
// it. torch::jit::load trusts the archive: a tensor whose storage record is shorter
// than its sizes, strides and offset say (a truncated or damaged data/N member) loads
// without complaint, and the first pass that reads it (freezing compares constant tensors)
// reads past the end of the storage and crashes. Found by tests/fuzz.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace c10 {
class IValue;
}
namespace torch::jit {
struct Module;
}
namespace caffe2::serialize {
class PyTorchStreamReader;
}

namespace brisk {

// How deeply the containers a pickle builds nest (lists, tuples, dicts, objects through
// REDUCE/BUILD), simulated over its opcodes without building anything. torch's Unpickler
// and IValue's destructors recurse once per level, so a small file that nests a value a
// few hundred thousand levels deep (`K\x01` + `\x85` * 200000 is 200 KB) overflows the
// stack while loading or freeing it. Stops at the first opcode it does not know (the
// Unpickler reports those itself).
size_t pickleNestingDepth(std::string_view pickle);

// What a simulated pass over a pickle's opcodes learns without building anything.
struct PickleScan {
  size_t depth = 0;       // deepest nesting of containers
  bool complete = false;  // reached STOP
  std::optional<uint8_t> unknown_opcode;  // the first opcode the scan does not know
  size_t unknown_at = 0;
  // Damage torch's Unpickler would act on before noticing (an operand running past the
  // end, a memo index it would size a table to): what, and the opcode's offset.
  std::string damage;
  size_t damage_at = 0;
  // The storages its persistent ids name: ('storage', torch.<T>Storage, key, location,
  // numel), as torch.save and torch.jit.save write them.
  struct Storage {
    std::string key;
    std::string type;  // "torch.FloatStorage"
    int64_t numel;
  };
  std::vector<Storage> storages;
};
PickleScan scanPickle(std::string_view pickle);

// No TorchScript archive or inputs file nests deeper than this; 50x what real ones do.
constexpr size_t kMaxPickleNesting = 1000;

// Reads every *.pkl / *.debug_pkl record of the archive at `path` and throws
// brisk::Error naming the model and the record when one nests deeper than
// kMaxPickleNesting, uses an opcode TorchScript's pickler never writes, or names a
// storage whose record is missing or shorter than its numel says. Archives whose zip
// layer cannot be read are left to torch::jit::load to report.
void checkArchivePickles(const std::string& path);
// The same for an archive torch.save wrote (an inputs file), opened by the caller,
// except that opcodes outside TorchScript's own are left to the unpickler.
void checkSavedArchive(caffe2::serialize::PyTorchStreamReader& reader, const std::string& file);

// Throws brisk::Error naming the model and the attribute (or constant) when a tensor
// reachable from the module's attributes or from its code's constants does not fit in
// its storage.
void checkLoadedTensors(const torch::jit::Module& module, const std::string& model);

// The same check for any value read from a file (e.g. an inputs file's arguments, which
// torch's pickle_load builds with the same unchecked storages): throws brisk::Error
// naming `file` and `what` ("input 'x'") when a tensor in `value` does not fit.
void checkTensorsFitStorage(const c10::IValue& value, const std::string& file, const std::string& what);

}  // namespace brisk
