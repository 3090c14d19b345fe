#include "core/executor/option_names.h"

#include "core/graph/builtin_passes.h"
#include "core/graph/graph_pass.h"
#include "planners/registry.h"

namespace brisk {

const OptionNameLists& optionNameLists() {
  static const OptionNameLists lists = [] {
    // Core's own passes only: a fresh registry, not the global one plugins add to.
    PassRegistry core;
    addBuiltinPasses(core);
    OptionNameLists out;
    std::vector<std::string>& optional = out["passes"];
    std::vector<std::string>& required = out["required_passes"];
    for (const GraphPass* p : core.ordered()) (p->required.empty() ? optional : required).push_back(p->name);
    out["planners"] = planners::PlannerRegistry::global().names();
    return out;
  }();
  return lists;
}

}  // namespace brisk
