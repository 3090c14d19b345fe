#pragma once
// Core's BlockRunner (core/kernels/block_runner.h): one ExecBlock of the plan, run on
// the calling step's Runtime by the serial executor.
#include "core/kernels/block_runner.h"

namespace brisk {

struct ExecBlock;

class CompiledBlock final : public BlockRunner {
 public:
  explicit CompiledBlock(const ExecBlock& block) : block_(block) {}

  size_t numParams() const override;
  size_t numReturns() const override;
  c10::IValue& param(const KernelContext& ctx, size_t i) const override;
  void run(const KernelContext& ctx) const override;
  const c10::IValue& peekReturn(const KernelContext& ctx, size_t i) const override;
  c10::IValue takeReturn(const KernelContext& ctx, size_t i) const override;
  void runInto(const KernelContext& ctx) const override;

 private:
  const ExecBlock& block_;
};

}  // namespace brisk
