#include "core/frontend/pt2/pt2.h"

#include "core/common/error.h"
#include "core/common/options.h"
#include "core/frontend/pt2/archive.h"
#include "core/frontend/pt2/graph_builder.h"
#include "core/graph/graph.h"

namespace brisk {

bool isPt2Archive(const std::string& path) { return pt2::isPt2Archive(path); }

FrontendResult loadPt2(const std::string& path, const Options& options) {
  try {
    pt2::Archive archive(path);
    const std::string program = archive.choose(options.pt2_program);
    const pt2::Json json = archive.readJson("models/" + program + ".json");
    try {
      pt2::checkSchemaVersion(json);
      auto state = archive.loadTensors(program);
      pt2::BuiltProgram built = pt2::buildGraph(json, state, path, options.optimize_numerics);
      return FrontendResult{std::move(built.graph), Signature(path, std::move(built.args)), nullptr};
    } catch (const Error& e) {
      throw Error(e.where(), "program '" + program + "': " + e.message());
    }
  } catch (const Error& e) {
    throw e.withModel(path);
  } catch (const pt2::Json::exception& e) {
    throw Error(Error::Where{path, "", ""}, std::string("malformed PT2 program JSON: ") + e.what());
  } catch (const std::exception& e) {
    throw Error(Error::Where{path, "", ""}, "cannot load the PT2 archive: " + describeException(e));
  }
}

}  // namespace brisk
