#include "core/frontend/pt2/pt2.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/common/options.h"
#include "core/frontend/pt2/archive.h"
#include "core/frontend/pt2/graph_builder.h"
#include "core/graph/graph.h"

namespace brisk {

bool isPt2Archive(const std::string& path) { return pt2::isPt2Archive(path); }

namespace {

// Names in sorted order: the archive's maps are unordered, and what Module::weights()
// lists should not change from one load to the next.
std::vector<WeightInfo> weightInfos(const std::unordered_map<std::string, at::Tensor>& state) {
  std::vector<WeightInfo> out;
  for (const auto& [name, t] : state) out.push_back(WeightInfo{name, t.sizes().vec(), t.scalar_type()});
  std::sort(out.begin(), out.end(), [](const WeightInfo& a, const WeightInfo& b) { return a.name < b.name; });
  return out;
}

// Errors from reading `path` as brisk::Error naming it.
template <typename F>
auto guarded(const std::string& path, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    throw e.withModel(path);
  } catch (const pt2::Json::exception& e) {
    throw Error(Error::Where{path, "", ""}, std::string("malformed PT2 program JSON: ") + e.what());
  } catch (const std::exception& e) {
    throw Error(Error::Where{path, "", ""}, "cannot load the PT2 archive: " + describeException(e));
  }
}

// A delegate program calls regions whose compiled files the archive must carry; the
// backend reads them at compile time, but a program that names files it lacks is a
// broken archive, reported here with the program.
void checkRegionFiles(const pt2::Archive& archive, const std::string& program, const std::string& region) {
  for (const std::string& f : archive.aotiFiles(region))
    if (f.size() > 3 && f.compare(f.size() - 3, 3, ".so") == 0) return;
  throw Error("it calls the compiled region '" + region + "', but the archive has no AOTInductor library for it " +
              "(no data/aotinductor/" + region + "/*.so): the delegate program does not match the archive's files");
}

}  // namespace

std::string pt2DelegateProgram(const std::string& path) {
  return guarded(path, [&] {
    pt2::Archive archive(path);
    for (const std::string& p : archive.programs())
      if (!archive.loweredFrom(p).empty()) return p;
    return std::string();
  });
}

WeightMap readPt2Weights(const std::string& path, const Options& options) {
  return guarded(path, [&] {
    pt2::Archive archive(path);
    auto state = archive.programState(archive.choose(options.pt2_program));
    return WeightMap(state.begin(), state.end());
  });
}

FrontendResult loadPt2(const std::string& path, const Options& options) {
  return loadPt2(path, options, WeightMap{});
}

FrontendResult loadPt2(const std::string& path, const Options& options, const WeightMap& replacements) {
  return guarded(path, [&] {
    pt2::Archive archive(path);
    const std::string program = archive.choose(options.pt2_program);
    const pt2::Json json = archive.readJson("models/" + program + ".json");
    try {
      pt2::checkSchemaVersion(json);
      auto state = archive.programState(program);
      std::vector<WeightInfo> weights = weightInfos(state);
      checkReplacements(weights, replacements, path);
      // Copies: the Module keeps `replacements` for every later swap, and a generation's
      // constants must not share storage with them (a delegate backend may free the bytes
      // of a constant only it reads: core/kernels/releasable_constants.h).
      for (const auto& [name, t] : replacements) state[name] = t.clone();
      pt2::BuiltProgram built = pt2::buildGraph(json, state, path, options.optimize_numerics);
      for (const std::string& region : built.delegate_calls) checkRegionFiles(archive, program, region);
      FrontendResult r{std::move(built.graph), Signature(path, std::move(built.args)), nullptr};
      r.weights = std::move(weights);
      return r;
    } catch (const Error& e) {
      throw Error(e.where(), "program '" + program + "': " + e.message());
    }
  });
}

}  // namespace brisk
