#include "core/kernels/releasable_constants.h"

#include <ATen/core/Tensor.h>

#include <unordered_map>

#include "core/graph/graph.h"
#include "core/kernels/delegate.h"

namespace brisk {
namespace {

c10::StorageImpl* storageOf(const Value* v) {
  if (!v->constant().isTensor()) return nullptr;
  const at::Tensor& t = v->constant().toTensor();
  return t.has_storage() ? t.storage().unsafeGetStorageImpl() : nullptr;
}

// How many constant values, in `g` and its fork subgraphs, hold each storage.
void countStorages(const Graph& g, std::unordered_map<const c10::StorageImpl*, int>& holders) {
  for (const Value* c : g.constants())
    if (const c10::StorageImpl* s = storageOf(c)) ++holders[s];
  for (const Node* n : g.allNodes())
    if (n->subgraph()) countStorages(*n->subgraph(), holders);
}

// True when `n` is `ancestor` or sits in one of its blocks, at any depth.
bool within(const Node* n, const Node* ancestor) {
  for (; n; n = n->owningBlock()->owningNode())
    if (n == ancestor) return true;
  return false;
}

bool wholeContiguous(const at::Tensor& t) {
  return t.is_contiguous() && t.storage_offset() == 0 &&
         t.storage().nbytes() == static_cast<size_t>(t.numel()) * t.element_size();
}

void markGraph(Graph& g, const std::unordered_map<const c10::StorageImpl*, int>& holders) {
  for (Node* d : g.allNodes()) {
    if (d->subgraph()) markGraph(*d->subgraph(), holders);
    if (d->kind() != kDelegateKind) continue;
    std::vector<int64_t> ids;
    for (const Value* c : g.constants()) {
      const c10::StorageImpl* s = storageOf(c);
      if (!s || holders.at(s) != 1 || !c->hasUses() || !wholeContiguous(c->constant().toTensor())) continue;
      bool inside = true;
      for (const Use& u : c->uses()) inside = inside && !u.isReturn() && within(u.user, d);
      if (inside) ids.push_back(c->id());
    }
    if (!ids.empty()) d->setAttribute(kReleasableAttr, c10::IValue(ids));
  }
}

}  // namespace

void markReleasableConstants(Graph& root) {
  std::unordered_map<const c10::StorageImpl*, int> holders;
  countStorages(root, holders);
  markGraph(root, holders);
}

std::vector<const Value*> releasableConstants(const Node& n) {
  std::vector<const Value*> out;
  auto it = n.attributes().find(kReleasableAttr);
  if (it == n.attributes().end()) return out;
  const Graph& g = *n.owningBlock()->graph();
  for (int64_t id : it->second.toIntVector()) out.push_back(g.value(static_cast<uint32_t>(id)));
  return out;
}

}  // namespace brisk
