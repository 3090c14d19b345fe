#include "tools/cli/model_locator.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "core/common/error.h"
#include "core/common/file_check.h"
#include "core/common/self_paths.h"
#include "core/frontend/model_inputs.h"

namespace brisk::cli {
namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string baseName(const std::string& p) { return p.substr(p.rfind('/') + 1); }

}  // namespace

std::string userPath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (wd && *wd) return std::string(wd) + "/" + path;
  return path;
}

std::string zooDir() {
  for (const std::string& root : runfilesRoots()) {
    std::string dir = root + "/brisk/tools/zoo";
    if (isRegularFile(dir + "/" + kDefaultModel + ".pt") || isDirectory(dir)) return dir;
  }
  return "";
}

std::vector<std::string> bundledModels() {
  std::vector<std::string> names;
  std::string dir = zooDir();
  if (dir.empty()) return names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string f = e->d_name;
      if (!endsWith(f, ".pt") || endsWith(f, ".inputs.pt") || endsWith(f, ".inputs2.pt") ||
          endsWith(f, ".expected.pt"))
        continue;
      names.push_back(f.substr(0, f.size() - 3));
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

ModelLocation locateModel(const std::string& model) {
  const std::string name = model.empty() ? kDefaultModel : model;
  if (!model.empty()) {
    std::string p = userPath(model);
    if (isRegularFile(p)) {
      std::string base = baseName(p);
      if (endsWith(base, ".pt")) base.resize(base.size() - 3);
      return {p, base, false};
    }
    // Something is there but it is no model file (a directory, FIFO, device, link loop).
    if (pathExists(p)) throw Error("model file " + p + ": it " + fileProblem(p));
  }
  const bool bare = name.find('/') == std::string::npos;
  std::string dir = zooDir();
  if (bare && !dir.empty() && isRegularFile(dir + "/" + name + ".pt")) return {dir + "/" + name + ".pt", name, true};
  // The zoo's files by file name: "resnet18.pt", "while_model.pt" (a PT2 program's
  // TorchScript twin), "resnet18.pt2", "resnet18.core.pt2".
  if (bare && endsWith(name, ".pt") && !dir.empty() && isRegularFile(dir + "/" + name))
    return {dir + "/" + name, name.substr(0, name.size() - 3), true};
  if (bare && endsWith(name, ".pt2") && !dir.empty() && isRegularFile(dir + "/" + name)) return {dir + "/" + name, name, true};

  std::string msg = "model file not found: " + (bare ? name : userPath(name));
  if (bare) {
    std::vector<std::string> names = bundledModels();
    if (names.empty()) {
      msg += " (and no bundled models in this binary's runfiles)";
    } else {
      msg += "; bundled models:";
      for (size_t i = 0; i < names.size(); ++i) msg += (i ? ", " : " ") + names[i];
    }
  }
  throw Error(msg);
}

std::string locateInputs(const ModelLocation& model, const std::string& inputs_flag) {
  if (!inputs_flag.empty()) {
    std::string p = userPath(inputs_flag);
    if (!pathExists(p)) throw Error("inputs file not found: " + p);
    if (std::string problem = fileProblem(p); !problem.empty()) throw Error("inputs file " + p + ": it " + problem);
    return p;
  }
  std::string p = defaultInputsPath(model.path);
  if (!isRegularFile(p))
    throw Error("no example inputs next to the model (looked for " + p + "); pass --inputs FILE");
  return p;
}

}  // namespace brisk::cli
