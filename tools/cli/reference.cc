#include "tools/cli/reference.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import_read.h>

#include <filesystem>
#include <memory>
#include <string_view>

#include "core/common/error.h"
#include "core/common/self_paths.h"
#include "core/common/file_check.h"
#include "core/frontend/archive_check.h"
#include "core/frontend/model_inputs.h"
#include "core/frontend/pt2/pt2.h"
#include "core/frontend/tensor_bounds.h"

namespace brisk::cli {
namespace {

constexpr double kReducedPrecisionBound = 0.05;

bool stripSuffix(std::string& s, std::string_view suffix) {
  if (s.size() <= suffix.size() || s.compare(s.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  s.resize(s.size() - suffix.size());
  return true;
}

// The same file under two spellings (a relative --inputs, a symlinked runfiles tree).
bool sameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  return a == b || std::filesystem::equivalent(a, b, ec);
}

}  // namespace

std::string torchScriptTwin(const std::string& pt2_path) {
  std::string stem = pt2_path;
  stripSuffix(stem, ".pt2");
  for (std::string_view suffix : {".core", ".dyn"}) stripSuffix(stem, suffix);
  return stem + ".pt";
}

std::string savedOutputsPath(const std::string& pt2_path, const std::string& inputs_path) {
  // export_pt2.py writes one set per program, shared by its two IRs: mlp.core.pt2 was
  // checked against mlp.pt2.expected.pt; mlp.dyn.pt2 has its own.
  std::string stem = pt2_path;
  stripSuffix(stem, ".pt2");
  stripSuffix(stem, ".core");
  if (sameFile(inputs_path, defaultInputsPath(pt2_path))) return stem + ".pt2.expected.pt";
  if (sameFile(inputs_path, stem + ".inputs2.pt")) return stem + ".pt2.inputs2.expected.pt";
  return "";
}

Reference findReference(const ModelLocation& model, const std::string& inputs_path) {
  Reference ref;
  if (!isPt2Archive(model.path)) {
    ref.kind = Reference::Kind::kInterpreter;
    ref.path = model.path;
    return ref;
  }
  const std::string twin = torchScriptTwin(model.path);
  if (isRegularFile(twin)) {
    ref.kind = Reference::Kind::kInterpreter;
    ref.path = twin;
    return ref;
  }
  ref.no_interpreter = "no TorchScript twin " + twin + ": PT2 references come from ep.module() in tools/bench:compare";
  const std::string saved = savedOutputsPath(model.path, inputs_path);
  if (!saved.empty() && pathExists(saved)) {  // a broken file is loadSavedOutputs' error
    ref.kind = Reference::Kind::kSavedOutputs;
    ref.path = saved;
    return ref;
  }
  ref.kind = Reference::Kind::kNone;
  ref.why_none = saved.empty() ? "saved ep.module() outputs (tools/zoo/export_pt2.py) exist only for the archive's "
                                 "own inputs files, not for " + inputs_path
                               : "no saved ep.module() outputs " + saved + " (tools/zoo/export_pt2.py writes them)";
  return ref;
}

std::string referenceName(const Reference& ref) {
  switch (ref.kind) {
    case Reference::Kind::kInterpreter: return "the TorchScript interpreter";
    case Reference::Kind::kSavedOutputs: return "ep.module()'s saved outputs";
    case Reference::Kind::kNone: break;
  }
  return "";
}

c10::IValue loadSavedOutputs(const std::string& path) {
  if (std::string problem = fileProblem(path); !problem.empty())
    throw Error("saved outputs file '" + path + "': cannot read it: it " + problem);
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
  try {
    reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
  } catch (const std::exception& e) {
    throw Error("saved outputs file '" + path + "': not a torch.save file: " + describeException(e));
  }
  checkSavedArchive(*reader, path);  // nesting and storage sizes, before torch's unpickler
  c10::IValue value;
  try {
    value = torch::jit::readArchiveAndTensors("data", "", "", std::nullopt, std::nullopt, std::nullopt, *reader);
  } catch (const std::exception& e) {
    throw Error("saved outputs file '" + path + "': not a torch.save file: " + describeException(e));
  }
  checkTensorsFitStorage(value, path, "outputs");
  return value;
}

Tolerance checkTolerance(const std::vector<std::string>& precision) {
  if (precision.empty()) return Tolerance{};
  return Tolerance{.rtol = 0, .atol = 0, .atol_scale = kReducedPrecisionBound};
}

std::string toleranceNote(const std::vector<std::string>& precision) {
  if (precision.empty()) return "";
  std::string modes;
  for (const std::string& m : precision) modes += (modes.empty() ? "" : ",") + m;
  return " (precision " + modes + ": within " + std::to_string(static_cast<int>(kReducedPrecisionBound * 100)) +
         "% of the output's largest magnitude)";
}

}  // namespace brisk::cli
