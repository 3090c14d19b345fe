#pragma once
// Kernels for ops with no out form whose result ATen allocates through the c10 CPU
// allocator (convolution, einsum, group_norm): an OutputCapture
// (core/kernels/output_capture.h) serves that allocation at the output's planned slab
// offset, so the result is ATen's own (same bits) and still lives in the memory plan.
// Their kernels' contract is OutputContract::kCaptured: core decides whether to plan.
#include "core/kernels/output_capture.h"
#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {

// Stores compute()'s result as output 0, its allocation served from the plan.
template <class F>
void storeCaptured(KernelContext& ctx, F&& compute) {
  OutputCapture capture(ctx, 0);
  at::Tensor r = compute();
  capture.done(r);
  ctx.output(0) = std::move(r);
}

}  // namespace brisk::ops_cpu::out
