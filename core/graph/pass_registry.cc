#include <algorithm>
#include <chrono>

#include "core/common/error.h"
#include "core/common/options.h"
#include "core/graph/graph.h"
#include "core/graph/graph_pass.h"

namespace brisk {

void PassRegistry::add(GraphPass pass) {
  if (pass.name.empty()) throw Error("a graph pass needs a name");
  if (!pass.run) throw Error("graph pass '" + pass.name + "' has no function");
  std::lock_guard<std::mutex> lock(mu_);
  if (const GraphPass* other = findLocked(pass.name))
    throw Error("graph pass '" + pass.name + "' is already registered (by " + other->provider + ")");
  passes_.push_back(std::move(pass));
}

std::vector<const GraphPass*> PassRegistry::ordered() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const GraphPass*> out;
  for (const GraphPass& p : passes_) out.push_back(&p);
  std::stable_sort(out.begin(), out.end(), [](const GraphPass* a, const GraphPass* b) { return a->order < b->order; });
  return out;
}

const GraphPass* PassRegistry::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return findLocked(name);
}

const GraphPass* PassRegistry::findLocked(const std::string& name) const {
  for (const GraphPass& p : passes_)
    if (p.name == name) return &p;
  return nullptr;
}

void PassRegistry::checkDisabled(const Options& options, const std::string& model) const {
  for (const std::string& name : options.disabled_passes) {
    if (const GraphPass* p = find(name)) {
      if (!p->required.empty())
        throw Error(Error::Where{model, "", ""}, "disabled_passes: graph pass '" + name + "' cannot be disabled: " + p->required);
      continue;
    }
    std::string known;
    for (const GraphPass* p : ordered()) known += (known.empty() ? "" : ", ") + p->name;
    throw Error(Error::Where{model, "", ""},
                "disabled_passes: no graph pass named '" + name + "' (the passes: " + known + ")");
  }
}

std::vector<PassResult> PassRegistry::run(Graph& graph, const PassContext& ctx) const {
  const auto& off = ctx.options.disabled_passes;
  std::vector<PassResult> results;
  for (const GraphPass* p : ordered()) {
    PassResult r{p->name, p->provider};
    r.skipped = std::find(off.begin(), off.end(), p->name) != off.end();
    if (!r.skipped) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        r.changed = p->run(graph, ctx);
      } catch (const Error& e) {
        throw Error(e.where(), "graph pass '" + p->name + "': " + e.message()).withModel(ctx.model);
      } catch (const std::exception& e) {
        throw Error(Error::Where{ctx.model, "", ""}, "graph pass '" + p->name + "': " + describeException(e));
      }
      r.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace brisk
