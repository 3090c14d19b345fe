// The kernel of a `brisk::delegate` node (core/kernels/delegate.h): compiles the node's
// partition with its backend when kernels are chosen, and at run time calls the
// compiled partition, or runs the node's nested block on brisk's own kernels when the
// backend declined to compile, failed to, or cannot serve this call's inputs.
#include <glog/logging.h>

#include "core/common/error.h"
#include "core/executor/runtime.h"
#include "core/graph/call_delegate.h"
#include "core/graph/graph.h"
#include "core/kernels/block_runner.h"
#include "core/kernels/core_kernel_sets.h"
#include "core/kernels/delegate.h"
#include "core/kernels/kernel_registry.h"
#include "core/kernels/output_capture.h"
#include "core/kernels/releasable_constants.h"

namespace brisk {
namespace {

class DelegateKernel final : public Kernel {
 public:
  DelegateKernel(std::string backend, std::unique_ptr<CompiledPartition> compiled, const BlockRunner* nested,
                 uint32_t state, bool capturable)
      : Kernel(KernelKind::kDelegate, capturable ? OutputContract::kCaptured : OutputContract::kFresh),
        backend_(std::move(backend)),
        compiled_(std::move(compiled)),
        nested_(nested),
        state_(state),
        capturable_(capturable) {}

  void run(KernelContext& ctx) const override {
    std::unique_ptr<KernelState>& st = Runtime::of(ctx).kernelState(state_);
    if (!st) st = compiled_->newState();  // stays null for stateless partitions: asks again, cheaply
    bool served;
    if (capturable_) {  // costs nothing when core did not plan the output
      OutputCapture capture(ctx, 0);
      served = compiled_->run(ctx, st.get());
      if (served) capture.done(ctx.output(0).toTensor());
    } else {
      served = compiled_->run(ctx, st.get());
    }
    if (served) return;
    if (!nested_) throw Error("backend '" + backend_ + "' cannot serve these inputs, and a compiled region has no "
                              "nested block to run instead");
    nested_->runInto(ctx);
  }
  std::string describe() const override {
    std::string s = backend_ + ": " + compiled_->describe();
    for (const std::string& c : compiled_->edgeConversions()) s += "; " + c;
    return s;
  }

 private:
  std::string backend_;
  std::unique_ptr<CompiledPartition> compiled_;
  const BlockRunner* nested_;
  uint32_t state_;
  bool capturable_;
};

// A partition its backend declined or failed to compile: brisk's kernels run it.
class NestedBlockKernel final : public Kernel {
 public:
  NestedBlockKernel(const BlockRunner* nested, std::string why)
      : Kernel(KernelKind::kNative), nested_(nested), why_(std::move(why)) {}
  void run(KernelContext& ctx) const override { nested_->runInto(ctx); }
  std::string describe() const override { return "runs its block on brisk's kernels (" + why_ + ")"; }

 private:
  const BlockRunner* nested_;
  std::string why_;
};

// A partition around a call into a compiled region (core/graph/call_delegate.h) has no
// nested block brisk can run: its backend failing is the model failing to load.
bool holdsCompiledRegion(const Node& n) {
  for (const Node* inner : n.block(0)->nodes())
    if (inner->kind() == kCallDelegateKind) return true;
  return false;
}

std::unique_ptr<Kernel> buildDelegateKernel(const Registries& registries, KernelBuildContext& b) {
  const Node& n = b.node();
  // A compiled region's nested block is never run (and its call has no kernel to build).
  const bool region = holdsCompiledRegion(n);
  const BlockRunner* nested = region ? nullptr : b.compileBlock(*n.block(0));
  auto attr = n.attributes().find(kDelegateBackendAttr);
  const std::string name = attr != n.attributes().end() ? attr->second.toStringRef() : "";
  std::shared_ptr<const DelegateBackend> backend = registries.delegates.find(name);
  if (!backend && region) throw Error("no delegate backend named '" + name + "' is loaded to run it");
  if (!backend) return std::make_unique<NestedBlockKernel>(nested, "no backend named '" + name + "'");
  std::unique_ptr<CompiledPartition> compiled;
  std::string why;
  try {
    const std::vector<const Value*> releasable = releasableConstants(n);
    compiled = backend->compile(Partition{*n.owningBlock()->graph(), n, releasable},
                                DelegateContext{b.modelName(), b.options()});
    if (!compiled) why = "backend '" + name + "' declined it";
  } catch (const std::exception& e) {
    why = "backend '" + name + "' failed to compile it: " + std::string(e.what());
  }
  if (!compiled && region) throw Error(why);
  if (!compiled) {
    LOG(WARNING) << "brisk: " << b.modelName() << ": " << n.describe() << " with " << n.block(0)->nodes().size()
                 << " nodes runs on brisk's kernels: " << why;
    return std::make_unique<NestedBlockKernel>(nested, why);
  }
  const bool capturable = compiled->outputPlannable();
  return std::make_unique<DelegateKernel>(name, std::move(compiled), nested, b.reserveKernelState(), capturable);
}

void registerDelegateKernel(Registries& r) {
  const Registries* regs = &r;
  r.native.add(kDelegateKind, [regs](KernelBuildContext& b) { return buildDelegateKernel(*regs, b); }, "core");
}

const CoreKernelSetRegistration delegate_kernel(registerDelegateKernel);

}  // namespace
}  // namespace brisk
