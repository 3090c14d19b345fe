#include "core/frontend/frontend.h"

#include "core/frontend/pt2/pt2.h"
#include "core/frontend/torchscript/torchscript.h"

namespace brisk {

ModelFormat modelFormat(const std::string& path) {
  return isPt2Archive(path) ? ModelFormat::kPt2 : ModelFormat::kTorchScript;
}

FrontendResult loadModel(const std::string& path, const Options& options, const WeightMap& replacements) {
  switch (modelFormat(path)) {
    case ModelFormat::kPt2:
      return loadPt2(path, options, replacements);
    case ModelFormat::kTorchScript:
      break;
  }
  return loadTorchScript(path, options, replacements);
}

WeightMap readModelWeights(const std::string& path, const Options& options) {
  switch (modelFormat(path)) {
    case ModelFormat::kPt2:
      return readPt2Weights(path, options);
    case ModelFormat::kTorchScript:
      break;
  }
  return readTorchScriptWeights(path);
}

std::string compiledRegionsProgram(const std::string& path) {
  return modelFormat(path) == ModelFormat::kPt2 ? pt2DelegateProgram(path) : std::string();
}

}  // namespace brisk
