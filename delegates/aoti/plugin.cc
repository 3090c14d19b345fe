// The aoti delegate backend: runs the calls into AOTInductor-compiled regions that a
// NativeRT archive's delegate program makes (core/graph/call_delegate.h), one
// partition per call (README.md).
#include "core/common/error.h"
#include "core/graph/call_delegate.h"
#include "core/graph/graph.h"
#include "core/kernels/delegate.h"
#include "core/kernels/plugin.h"
#include "delegates/aoti/artifact.h"
#include "delegates/aoti/compiled_region.h"

namespace brisk::aoti {
namespace {

std::string stringAttr(const Node& n, const char* name) {
  auto it = n.attributes().find(name);
  return it != n.attributes().end() && it->second.isString() ? it->second.toStringRef() : "";
}

class AotiBackend final : public DelegateBackend {
 public:
  std::vector<std::vector<const Node*>> claim(const Block& block, const DelegateContext&) const override {
    std::vector<std::vector<const Node*>> groups;
    for (const Node* n : block.nodes())
      if (n->kind() == kCallDelegateKind && stringAttr(*n, kCallDelegateBackendAttr) == "aoti") groups.push_back({n});
    return groups;
  }

  std::unique_ptr<CompiledPartition> compile(const Partition& p, const DelegateContext&) const override {
    const Node& call = *p.node.block(0)->nodes().at(0);
    const std::string archive = stringAttr(call, kCallDelegateArchiveAttr);
    const std::string region = stringAttr(call, kCallDelegateNameAttr);
    return std::make_unique<CompiledRegion>(p, Artifact::open(archive, region));
  }
};

}  // namespace
}  // namespace brisk::aoti

BRISK_PLUGIN(registrar) { registrar.delegate("aoti", std::make_shared<brisk::aoti::AotiBackend>()); }
