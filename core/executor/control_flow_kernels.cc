// prim::If and prim::Loop: higher-order kernels that run their sub-blocks (compiled
// into the same plan, sharing the Runtime's slot array) through their BlockRunners.
#include "core/kernels/block_runner.h"
#include "core/graph/graph.h"
#include "core/kernels/core_kernel_sets.h"
#include "core/kernels/kernel_registry.h"
#include "core/executor/runtime.h"

namespace brisk {
namespace {

class IfKernel final : public Kernel {
 public:
  IfKernel(const BlockRunner* then_block, const BlockRunner* else_block)
      : Kernel(KernelKind::kNative), then_(then_block), else_(else_block) {}

  void run(KernelContext& ctx) const override { (ctx.input(0).toBool() ? then_ : else_)->runInto(ctx); }
  std::string describe() const override { return "runs one of two blocks"; }

 private:
  const BlockRunner* then_;
  const BlockRunner* else_;
};

// prim::Loop(max_trip_count, initial_condition, carried...) with body
// (iteration, carried...) -> (condition, carried...); outputs are the final carried values.
class LoopKernel final : public Kernel {
 public:
  explicit LoopKernel(const BlockRunner* body) : Kernel(KernelKind::kNative), body_(body) {}

  void run(KernelContext& ctx) const override {
    const BlockRunner& body = *body_;
    const size_t carried = ctx.numOutputs();
    const int64_t max_trips = ctx.input(0).toInt();
    bool cond = ctx.input(1).toBool();
    for (size_t i = 0; i < carried; ++i) body.param(ctx, 1 + i) = ctx.input(2 + i);
    for (int64_t trip = 0; cond && trip < max_trips; ++trip) {
      body.param(ctx, 0) = trip;
      body.run(ctx);
      cond = body.peekReturn(ctx, 0).toBool();
      // Gather first: a return may be another carried value's parameter (a swap).
      // Fetched after the body: a wait inside it may resume this task on another thread.
      std::vector<c10::IValue>& next = Runtime::scratch();
      next.clear();
      for (size_t i = 0; i < carried; ++i) next.push_back(body.takeReturn(ctx, 1 + i));
      for (size_t i = 0; i < carried; ++i) body.param(ctx, 1 + i) = std::move(next[i]);
      next.clear();
    }
    for (size_t i = 0; i < carried; ++i) ctx.output(i) = std::move(body.param(ctx, 1 + i));
    body.param(ctx, 0) = c10::IValue();
  }
  std::string describe() const override { return "runs its body block"; }

 private:
  const BlockRunner* body_;
};

void registerControlFlowKernels(Registries& r) {
  r.native.add(
      "prim::If",
      [](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
        const Node& n = b.node();
        return std::make_unique<IfKernel>(b.compileBlock(*n.block(0)), b.compileBlock(*n.block(1)));
      },
      "core");
  r.native.add(
      "prim::Loop",
      [](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
        return std::make_unique<LoopKernel>(b.compileBlock(*b.node().block(0)));
      },
      "core");
}

const CoreKernelSetRegistration control_flow_kernels(registerControlFlowKernels);

}  // namespace

}  // namespace brisk
