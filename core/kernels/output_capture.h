#pragma once
// For kernels whose op has no out= form but allocate their result through the c10 CPU
// allocator (convolution): lets the memory planner place that result in the slab with
// no copy. Usage in run():
//
//   OutputCapture capture(ctx, 0);     // before computing output 0
//   at::Tensor r = at::native::_convolution(...);
//   capture.done(r);                   // after; then store r as usual
//   ctx.output(0) = std::move(r);
//
// How (core/memory/memory_plan.h, core/memory/capture_allocator.h): the first call of a node in a
// Runtime learns which of the allocations the op makes becomes its result (the n-th,
// of exactly so many bytes; oneDNN also allocates reorder buffers of the same size).
// Once the block's slab is planned, that allocation is served at the output's planned
// offset, and the call's other allocations (oneDNN's reorder buffers, its copy of the
// weights) are served from a scratch region of the slab planned to live during that
// step only, so they never grow the heap. Anything unexpected (another allocation
// order, other sizes after a shape change, no planner on this thread) falls back to a
// normal allocation and re-learns;
// the result is always correct, only its placement changes. Costs nothing when the
// output is not managed (escapes, no memory planning).
#include <cstddef>
#include <cstdint>

#include "core/kernels/kernel.h"

namespace brisk {

class BlockMemory;

class OutputCapture {
 public:
  OutputCapture(KernelContext& ctx, size_t output) noexcept;
  ~OutputCapture();
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;
  // `result`: what the kernel is about to store in the output.
  void done(const at::Tensor& result) noexcept;

 private:
  BlockMemory* mem_ = nullptr;
  int32_t index_ = -1;
};

// While one lives on a thread, that thread's allocations bypass the memory plan: for
// what a kernel allocates once and keeps beyond the call (a weight packed on the first
// call with a new input shape), which must neither be served from the slab nor count
// as the call's scratch.
class UnplannedAllocations {
 public:
  UnplannedAllocations() noexcept;
  ~UnplannedAllocations();
  UnplannedAllocations(const UnplannedAllocations&) = delete;
  UnplannedAllocations& operator=(const UnplannedAllocations&) = delete;

 private:
  void* saved_;
};

}  // namespace brisk
