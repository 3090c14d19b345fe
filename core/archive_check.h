#pragma once
// Checks on what torch::jit::load produced from a user's archive, before anything reads
// it. torch::jit::load trusts the archive: a tensor whose storage record is shorter
// than its sizes, strides and offset say (a truncated or damaged data/N member) loads
// without complaint, and the first pass that reads it (freezing compares constant tensors)
// reads past the end of the storage and crashes. Found by tests/fuzz.
#include <string>

namespace torch::jit {
struct Module;
}

namespace brisk {

// Throws brisk::Error naming the model and the attribute (or constant) when a tensor
// reachable from the module's attributes or from its code's constants does not fit in
// its storage.
void checkLoadedTensors(const torch::jit::Module& module, const std::string& model);

}  // namespace brisk
