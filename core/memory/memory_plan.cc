#include "core/memory/memory_plan.h"

#include "core/plan/execution_plan.h"
#include "core/graph/escape_analysis.h"
#include "core/graph/graph.h"
#include "core/graph/liveness.h"

namespace brisk {

// --- Load time -------------------------------------------------------------------

void planManagedValues(const Graph& graph, const BlockLiveness& live, const std::vector<uint8_t>& retained,
                       ExecBlock& eb) {
  eb.managed.clear();
  const auto& nodes = eb.source->nodes();
  const size_t n = nodes.size();
  std::vector<std::vector<Value*>> edges(n);
  for (size_t i = 0; i < n; ++i) edges[i] = aliasedInputs(*nodes[i]);
  // in_set[id] == stamp: the value is the managed tensor being followed or may alias it.
  std::vector<uint32_t> in_set(graph.numValues(), 0);
  uint32_t stamp = 0;
  for (size_t i = 0; i < n; ++i) {
    for (const Value* out : nodes[i]->outputs()) {
      if (!retained[out->id()] || out->type()->kind() != c10::TypeKind::TensorType) continue;
      ++stamp;
      in_set[out->id()] = stamp;
      std::vector<uint32_t> readers;
      for (size_t j = i + 1; j < n; ++j) {
        bool read = false;
        for (const Value* r : live.reads(j))
          if (in_set[r->id()] == stamp) {
            read = true;
            break;
          }
        if (!read) continue;
        readers.push_back(static_cast<uint32_t>(j));
        // Outputs of a node that may alias what it read join the set. A node with
        // sub-blocks is treated as aliasing everything it (or its blocks) read, but for
        // a delegate partition, whose aliasing aliasedInputs works out from its nested
        // block (otherwise every tensor a partition reads would live as long as the
        // partition's result: mobilenet_v2's slab grew 4.5x).
        bool aliases = !nodes[j]->blocks().empty() && nodes[j]->kind() != kDelegateKind;
        for (const Value* e : edges[j]) aliases = aliases || in_set[e->id()] == stamp;
        if (aliases)
          for (const Value* o : nodes[j]->outputs()) in_set[o->id()] = stamp;
      }
      const auto first = static_cast<uint32_t>(i);
      const uint32_t last = readers.empty() ? first : readers.back();
      eb.managed.push_back(ManagedValue{out->id(), first, last, std::move(readers)});
    }
  }
}

}  // namespace brisk
