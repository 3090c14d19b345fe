#include "core/executor/compiled_block.h"

#include "core/executor/runtime.h"
#include "core/plan/execution_plan.h"

namespace brisk {

size_t CompiledBlock::numParams() const { return block_.params.size(); }
size_t CompiledBlock::numReturns() const { return block_.returns.size(); }

c10::IValue& CompiledBlock::param(const KernelContext& ctx, size_t i) const {
  return Runtime::of(ctx).slots()[block_.params[i]];
}

void CompiledBlock::run(const KernelContext& ctx) const { Runtime::of(ctx).runBlock(block_); }

const c10::IValue& CompiledBlock::peekReturn(const KernelContext& ctx, size_t i) const {
  return Runtime::of(ctx).slots()[block_.returns[i]];
}

c10::IValue CompiledBlock::takeReturn(const KernelContext& ctx, size_t i) const {
  return block_.takeReturn(Runtime::of(ctx).slots(), i);
}

void CompiledBlock::runInto(const KernelContext& ctx) const {
  Runtime& rt = Runtime::of(ctx);
  rt.runBlock(block_);
  for (size_t i = 0; i < block_.returns.size(); ++i) ctx.output(i) = block_.takeReturn(rt.slots(), i);
}

}  // namespace brisk
