#pragma once
// Checks on a user's archive before torch reads it. torch::jit::load and torch's
// unpickler trust their input: a pickle nested a few hundred thousand levels deep
// overflows the stack, a damaged memo index sizes a table to 32 GB, a storage record
// shorter than its pickle says is read past its end. Each check here turns one of those
// into a brisk::Error naming the file and the record. Found by tests/fuzz.
#include <string>

namespace caffe2::serialize {
class PyTorchStreamReader;
}

namespace brisk {

// Reads every *.pkl / *.debug_pkl record of the archive at `path` and throws
// brisk::Error naming the model and the record when one nests deeper than
// kMaxPickleNesting, is damaged, uses an opcode TorchScript's pickler never writes, or
// names a storage whose record is missing or shorter than its numel says. Archives
// whose zip layer cannot be read are left to torch::jit::load to report.
void checkArchivePickles(const std::string& path);

// The same for an archive torch.save wrote (an inputs file), opened by the caller,
// except that opcodes outside TorchScript's own are left to the unpickler.
void checkSavedArchive(caffe2::serialize::PyTorchStreamReader& reader, const std::string& file);

}  // namespace brisk
