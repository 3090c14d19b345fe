// prim::fork / aten::wait. Each fork subgraph is a child module compiled once at load.
// prim::fork hands a task that runs the child (a Runtime from the child's own pool) to
// the run's launcher (RunOptions::launcher, default: the inter-op arena) and yields a
// c10 future; aten::wait joins it (running the task itself when no thread has started it
// yet, see ForkClaim in runtime.h). Waiting on an arena thread does not idle it (see
// threading/inter_op_arena.h), so nested forks deeper than the arena complete. An error
// inside the task completes the future with it; wait rethrows it (it names the child's
// model and node).
#include <ATen/core/ivalue_inl.h>

#include "core/common/error.h"
#include "core/graph/graph.h"
#include "core/kernels/core_kernel_sets.h"
#include "core/kernels/kernel_registry.h"
#include "core/executor/compiled_module.h"
#include "core/executor/plan_builder.h"
#include "core/executor/runtime.h"
#include "threading/inter_op_arena.h"

namespace brisk {
namespace {

class ForkKernel final : public Kernel {
 public:
  ForkKernel(std::shared_ptr<const CompiledModule> child, c10::TypePtr elem)
      : Kernel(KernelKind::kNative), child_(std::move(child)), elem_(std::move(elem)) {}

  void run(KernelContext& ctx) const override {
    std::vector<c10::IValue> args;
    args.reserve(ctx.numInputs());
    for (size_t i = 0; i < ctx.numInputs(); ++i) args.push_back(ctx.input(i));
    auto future = c10::make_intrusive<c10::ivalue::Future>(elem_);
    // The task outlives this call: it owns the child, the arguments and a copy of the
    // run options (launcher for nested forks, profiler).
    const RunOptions& ro = Runtime::of(ctx).runOptions();
    auto claim = std::make_shared<ForkClaim>();
    claim->body = [child = child_, args = std::move(args), future, ro]() mutable {
      try {
        future->markCompleted(child->run(std::move(args), {}, ro));
      } catch (...) {
        future->setError(std::current_exception());
      }
    };
    Runtime::of(ctx).addForkClaim(future.get(), claim);
    Task task = [claim] { claim->runIfUnclaimed(); };
    if (ro.launcher)
      ro.launcher(std::move(task));
    else
      threading::InterOpArena::get().launch(std::move(task));
    ctx.output(0) = std::move(future);
  }
  std::string describe() const override { return "launches child module " + child_->name(); }

 private:
  std::shared_ptr<const CompiledModule> child_;
  c10::TypePtr elem_;
};

class WaitKernel final : public Kernel {
 public:
  WaitKernel() : Kernel(KernelKind::kNative) {}
  void run(KernelContext& ctx) const override {
    const c10::intrusive_ptr<c10::ivalue::Future> future = ctx.input(0).toFuture();
    // Not started yet (no worker free or awake): run it here rather than wait for one.
    if (!future->completed())
      if (std::shared_ptr<ForkClaim> claim = Runtime::of(ctx).takeForkClaim(future.get())) claim->runIfUnclaimed();
    if (!future->completed())
      threading::waitFor([&future](Task wake) {
        future->addCallback([wake = std::move(wake)](c10::ivalue::Future&) { wake(); });
      });
    if (future->hasError()) std::rethrow_exception(future->exception_ptr());
    ctx.output(0) = future->value();
  }
  std::string describe() const override { return "joins a fork (non-idle on arena threads)"; }
};

void registerForkKernels(Registries& r) {
  r.native.add(
      "prim::fork",
      [](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
        const Node& n = b.node();
        if (!n.subgraph()) return nullptr;
        c10::TypePtr elem = n.output(0)->type()->expectRef<c10::FutureType>().getElementType();
        return std::make_unique<ForkKernel>(ModuleBuildContext::of(b).buildChild(*n.subgraph()), elem);
      },
      "core");
  r.native.add("aten::wait", [](KernelBuildContext&) { return std::make_unique<WaitKernel>(); }, "core");
}

const CoreKernelSetRegistration fork_kernels(registerForkKernels);

}  // namespace

}  // namespace brisk
