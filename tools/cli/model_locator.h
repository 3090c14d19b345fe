#pragma once
// Resolving the MODEL argument and other user paths of the brisk CLI.
#include <string>
#include <vector>

namespace brisk::cli {

// The bundled model used when no MODEL is given.
constexpr const char* kDefaultModel = "resnet18";

struct ModelLocation {
  std::string path;         // the .pt file
  std::string name;         // display name (zoo name or file name without .pt)
  bool bundled = false;     // found in the bundled zoo
};

// A user-given path relative to where the user ran the command: under `bazel run`
// the process starts in the runfiles tree and $BUILD_WORKING_DIRECTORY is the user's
// directory.
std::string userPath(const std::string& path);

// MODEL may be: empty (the default bundled model), an existing file, or a bare zoo
// name like "mlp" (resolved to the bundled <name>.pt in the binary's runfiles).
// Throws brisk::Error when nothing matches (listing the bundled names).
ModelLocation locateModel(const std::string& model);

// Directory holding the bundled zoo models, or "" when none is found. Searched:
// $RUNFILES_DIR, $TEST_SRCDIR, <exe>.runfiles (each + /brisk/tools/zoo).
std::string zooDir();
std::vector<std::string> bundledModels();

// The inputs file: `--inputs` (user path) or the model's <model>.inputs.pt. Throws
// brisk::Error when the default one does not exist.
std::string locateInputs(const ModelLocation& model, const std::string& inputs_flag);

}  // namespace brisk::cli
