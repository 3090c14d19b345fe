#include "core/graph/liveness.h"

#include <algorithm>
#include <unordered_set>

#include "core/graph/graph.h"

namespace brisk {
namespace {

// Appends what `n` reads, nested blocks included; `seen[id] == stamp` drops repeats.
void collectReads(const Node* n, uint32_t stamp, std::unordered_map<uint32_t, uint32_t>& seen,
                  std::vector<const Value*>& out) {
  auto add = [&](const Value* v) {
    auto [it, fresh] = seen.emplace(v->id(), stamp);
    if (!fresh && it->second == stamp) return;
    it->second = stamp;
    out.push_back(v);
  };
  for (const Value* v : n->inputs()) add(v);
  for (const auto& b : n->blocks()) {
    for (const Node* inner : b->nodes()) collectReads(inner, stamp, seen, out);
    for (const Value* r : b->returns()) add(r);
  }
}

}  // namespace

BlockLiveness::BlockLiveness(const Block& block, const std::vector<uint8_t>& retained) {
  const auto& nodes = block.nodes();
  const size_t n = nodes.size();
  reads_.resize(n);
  released_after_.resize(n);
  for (const Value* p : block.params()) values_[p->id()];
  std::unordered_map<uint32_t, uint32_t> seen;
  for (size_t i = 0; i < n; ++i) {
    const auto step = static_cast<uint32_t>(i);
    collectReads(nodes[i], step, seen, reads_[i]);
    for (const Value* v : reads_[i])
      if (v->owningBlock() == &block) {
        ValueLiveness& l = values_[v->id()];
        l.readers.push_back(step);
        l.last_use = step;
      }
    for (const Value* out : nodes[i]->outputs()) values_[out->id()].def = step;
  }
  for (auto& [id, l] : values_)
    if (l.last_use == ValueLiveness::kNoStep) l.last_use = l.def;  // unused: dies at once
  std::unordered_set<uint32_t> returned;
  for (const Value* r : block.returns()) returned.insert(r->id());
  for (auto& [id, l] : values_) {
    l.released = l.last_use != ValueLiveness::kNoStep && !retained[id] && !returned.count(id);
    if (l.released) released_after_[l.last_use].push_back(id);
  }
  for (auto& r : released_after_) std::sort(r.begin(), r.end());
}

}  // namespace brisk
