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

// What torch.save writes for some inputs, as the model's signature types them (what the
// interpreter and the Python binding accept): a rank-0 tensor for a float, int or bool
// argument becomes that number, and a list holding only tensors (or only ints, or only
// floats) for a List[Tensor] (List[int], List[float]) argument becomes a typed list.
// Anything else is left for Module::run's own check to name.
void coerceToSignature(ModelInputs& in, const Signature& signature);

// Deep copy (tensors cloned), so a caller can check inputs were left unchanged.
ModelInputs cloneInputs(const ModelInputs& in);

}  // namespace brisk
