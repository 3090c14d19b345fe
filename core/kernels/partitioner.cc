#include "core/kernels/partitioner.h"

#include <ATen/core/function_schema.h>
#include <glog/logging.h>

#include <optional>
#include <unordered_set>
#include <vector>

#include "core/common/options.h"
#include "core/graph/effects.h"
#include "core/graph/graph.h"
#include "core/graph/graph_pass.h"
#include "core/kernels/delegate.h"
#include "core/kernels/kernel_registry.h"

namespace brisk {
namespace {

std::string describeGroup(const std::vector<const Node*>& group) {
  std::string s;
  for (size_t i = 0; i < group.size() && i < 6; ++i) s += (i ? ", " : "") + group[i]->describe();
  if (group.size() > 6) s += ", ... (" + std::to_string(group.size()) + " nodes)";
  return s;
}

// Whether `n`'s results may alias its inputs (a view, a container holding them), as far
// as its schema says; a node without a schema may.
bool mayReturnAlias(const Node& n) {
  if (!n.schema()) return true;
  for (const c10::Argument& r : n.schema()->returns())
    if (r.alias_info()) return true;
  return false;
}

// Why `n`, a node with effects, cannot join `group`, or "": allowed when writing inputs
// is its only effect and each value it writes is made in the group and read nowhere
// else (not by a node outside it, not as a block output), as an in-place activation or
// residual add on a convolution's result is in torch.export's aten IR. Nor may another
// reader in the group pass on a view of it: a node outside reading that view would see
// the write, which it may have run before.
std::string effectProblem(const Block& block, const Node& n, const std::unordered_set<const Node*>& group) {
  const std::string refused = n.describe() + " has effects (core/graph/effects.h) and is never delegated";
  const std::optional<std::vector<const Value*>> written = writtenInputsOnly(n);
  if (!written || written->empty()) return refused;
  for (const Value* w : *written) {
    if (!w->producer() || !group.count(w->producer())) return refused + " (it writes " + w->ref() + ", made outside the group)";
    for (const Use& u : w->uses()) {
      const Node* reader = u.user ? u.user->enclosingNodeIn(&block) : nullptr;
      if (!reader || !group.count(reader))
        return refused + " (it writes " + w->ref() + ", which is read outside the group)";
      if (u.user != &n && mayReturnAlias(*u.user))
        return refused + " (it writes " + w->ref() + ", of which " + u.user->describe() + " may pass on a view)";
    }
  }
  return "";
}

// Why core refuses `group` claimed by a backend in `block`, or "".
std::string claimProblem(const Block& block, const std::vector<Node*>& group,
                         std::unordered_set<const Node*>& claimed) {
  const std::unordered_set<const Node*> members(group.begin(), group.end());
  for (const Node* n : group) {
    if (n->kind() == kDelegateKind) return n->describe() + " is a partition already";
    if (n->owningBlock() != &block)
      return n->owningBlock() && n->owningBlock()->owningNode() &&
                     n->owningBlock()->owningNode()->kind() == kDelegateKind
                 ? n->describe() + " is in another partition already (overlap)"
                 : n->describe() + " is not a node of the block the backend was asked about";
    if (hasEffects(*n))
      if (std::string problem = effectProblem(block, *n, members); !problem.empty()) return problem;
    if (claimed.count(n)) return n->describe() + " is claimed twice (overlap)";
  }
  std::string problem = block.wrapProblem(group);
  if (problem.empty()) claimed.insert(group.begin(), group.end());
  return problem;
}

}  // namespace

size_t partitionDelegates(Graph& graph, const PassContext& ctx, const DelegateRegistry& delegates) {
  size_t made = 0;
  // --fallback-only asks for every node through the TorchScript operator.
  if (!ctx.options.use_delegates || ctx.options.fallback_only) return 0;
  const DelegateContext dctx{ctx.model, ctx.options};
  for (const std::string& name : ctx.options.delegates) {
    std::shared_ptr<const DelegateBackend> backend = delegates.find(name);
    if (!backend) continue;  // Module::load already said why (a missing default backend)
    for (Block* block : graph.allBlocks()) {
      if (block->owningNode() && block->owningNode()->kind() == kDelegateKind) continue;
      std::vector<std::vector<const Node*>> claims;
      try {
        claims = backend->claim(*block, dctx);
      } catch (const std::exception& e) {
        LOG(WARNING) << "brisk: " << ctx.model << ": delegate backend '" << name
                     << "' failed while claiming nodes; that block stays on brisk's kernels: " << e.what();
        continue;
      }
      std::unordered_set<const Node*> claimed;
      for (const auto& group : claims) {
        if (group.empty()) continue;
        // The backend saw the block read-only; the nodes are the block's own.
        std::vector<Node*> nodes;
        for (const Node* n : group) nodes.push_back(const_cast<Node*>(n));
        if (std::string problem = claimProblem(*block, nodes, claimed); !problem.empty()) {
          LOG(WARNING) << "brisk: " << ctx.model << ": delegate backend '" << name << "' claimed "
                       << describeGroup(group) << "; refused: " << problem;
          continue;
        }
        Node* d = block->wrapNodes(nodes, kDelegateKind);
        d->setAttribute(kDelegateBackendAttr, name);
        ++made;
      }
    }
  }
  return made;
}

void addPartitionPass(Registries& registries) {
  const DelegateRegistry* delegates = &registries.delegates;
  registries.passes.add(GraphPass{
      "partition_delegates", kPassOrderPartition, "core",
      "delegate backends (Options::delegates) claim groups of nodes; each accepted group becomes one delegate node",
      [delegates](Graph& g, const PassContext& ctx) { return partitionDelegates(g, ctx, *delegates); }});
}

}  // namespace brisk
