#pragma once
// Checks that every tensor torch built from a user's file fits in its storage.
// torch::jit::load and torch's unpickler trust the archive: a tensor whose storage
// record is shorter than its sizes, strides and offset say (a truncated or damaged
// data/N member) loads without complaint, and the first pass that reads it (freezing
// compares constant tensors) reads past the end of the storage and crashes. Found by
// tests/fuzz.
#include <string>

namespace c10 {
class IValue;
}
namespace torch::jit {
struct Module;
}

namespace brisk {

// Throws brisk::Error naming the model and the attribute (or constant) when a tensor
// reachable from the module's attributes or from its code's constants does not fit in
// its storage.
void checkLoadedTensors(const torch::jit::Module& module, const std::string& model);

// The same check for any value read from a file (e.g. an inputs file's arguments):
// throws brisk::Error naming `file` and `what` ("input 'x'") when a tensor in `value`
// does not fit.
void checkTensorsFitStorage(const c10::IValue& value, const std::string& file, const std::string& what);

}  // namespace brisk
