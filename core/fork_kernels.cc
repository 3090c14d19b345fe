// prim::fork / aten::wait. Each fork subgraph is a child Module built once at load;
// a fork runs it through the child's own runtime pool and yields a completed future.
// (Runs inline on the caller's thread; the threading library replaces the launcher.)
#include <ATen/core/ivalue_inl.h>

#include "core/error.h"
#include "core/graph.h"
#include "core/kernel_registry.h"
#include "core/module.h"
#include "core/runtime.h"

namespace brisk {
namespace {

class ForkKernel final : public Kernel {
 public:
  ForkKernel(std::shared_ptr<Module> child, c10::TypePtr elem)
      : Kernel(KernelKind::kNative), child_(std::move(child)), elem_(std::move(elem)) {}

  void run(KernelContext& ctx) const override {
    std::vector<c10::IValue> args;
    args.reserve(ctx.numInputs());
    for (size_t i = 0; i < ctx.numInputs(); ++i) args.push_back(ctx.input(i));
    auto future = c10::make_intrusive<c10::ivalue::Future>(elem_);
    future->markCompleted(child_->run(std::move(args)));
    ctx.output(0) = std::move(future);
  }
  std::string describe() const override { return "runs child module " + child_->name(); }

 private:
  std::shared_ptr<Module> child_;
  c10::TypePtr elem_;
};

class WaitKernel final : public Kernel {
 public:
  WaitKernel() : Kernel(KernelKind::kNative) {}
  void run(KernelContext& ctx) const override {
    const auto& future = ctx.input(0).toFuture();
    future->wait();
    if (future->hasError()) std::rethrow_exception(future->exception_ptr());
    ctx.output(0) = future->value();
  }
  std::string describe() const override { return "joins a fork"; }
};

}  // namespace

void registerForkKernels(Registries& r) {
  r.native.add(
      "prim::fork",
      [](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
        const Node& n = b.node();
        if (!n.subgraph()) return nullptr;
        c10::TypePtr elem = n.output(0)->type()->expectRef<c10::FutureType>().getElementType();
        return std::make_unique<ForkKernel>(b.buildChild(*n.subgraph()), elem);
      },
      "core");
  r.native.add("aten::wait", [](KernelBuildContext&) { return std::make_unique<WaitKernel>(); }, "core");
}

}  // namespace brisk
