#pragma once
// Kernels for ops with no out form whose result ATen allocates through the c10 CPU
// allocator (convolution, einsum, group_norm): an OutputCapture
// (core/kernels/output_capture.h) serves that allocation at the output's planned slab
// offset, so the result is ATen's own (same bits) and still lives in the memory plan.
#include "core/common/options.h"
#include "core/kernels/output_capture.h"
#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {

// kOutVariant (retained, managed) only when the memory plan can place the output; a
// retained output the plan does not place would only hold memory between runs.
inline KernelKind capturedKind(KernelBuildContext& b) {
  return b.options().memory_planning ? KernelKind::kOutVariant : KernelKind::kNative;
}

// Stores compute()'s result as output 0, its allocation served from the plan.
template <class F>
void storeCaptured(KernelContext& ctx, F&& compute) {
  OutputCapture capture(ctx, 0);
  at::Tensor r = compute();
  capture.done(r);
  ctx.output(0) = std::move(r);
}

}  // namespace brisk::ops_cpu::out
