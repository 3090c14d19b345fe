#pragma once
// Example inputs bundled with a model: `<model>.inputs.pt`, written by
// torch.save({"args": [...], "kwargs": {...}}) (see tools/zoo).
#include <string>
#include <vector>

#include "core/graph/signature.h"

namespace brisk {

struct ModelInputs {
  std::vector<c10::IValue> args;
  Kwargs kwargs;
};

// Throws brisk::Error naming the file when it is missing or malformed.
ModelInputs loadInputs(const std::string& path);

// "<dir>/<name>.pt" -> "<dir>/<name>.inputs.pt".
std::string defaultInputsPath(const std::string& model_path);

// Deep copy (tensors cloned), so a caller can check inputs were left unchanged.
ModelInputs cloneInputs(const ModelInputs& in);

}  // namespace brisk
