#pragma once
// AOTInductor's CPU model container runner, with what brisk asks of it beyond its
// public API: how many inputs and outputs the compiled code takes and returns.
#include <torch/csrc/inductor/aoti_runner/model_container_runner_cpu.h>

#include <string>
#include <unordered_map>

namespace brisk::aoti {

// libtorch.so, which AOTInductor libraries name as a dependency and brisk (linked with
// libtorch_cpu alone) does not load; from libtorch_cpu's own folder. Throws brisk::Error.
void ensureLibtorchLoaded();

class Container final : public torch::inductor::AOTIModelContainerRunnerCpu {
 public:
  // With the library's own (embedded) constants.
  explicit Container(const std::string& library) : AOTIModelContainerRunnerCpu(library, 1) {}
  // With `constants` (library constant name -> tensor) as its constants, read in place.
  Container(const std::string& library, std::unordered_map<std::string, at::Tensor>& constants)
      : AOTIModelContainerRunnerCpu(library, 1, constants) {}
  size_t numInputs() const;
  size_t numOutputs() const;
};

}  // namespace brisk::aoti
