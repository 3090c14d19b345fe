#pragma once
// What a higher-order kernel (prim::If, prim::Loop, the nested fallback of a delegate
// region) holds for one of its node's nested blocks.
//
// Core compiles the block into the Module's plan at load (KernelBuildContext::
// compileBlock) and owns it for the Module's lifetime; how the block is stored and
// which executor runs it stay core's. At run time the kernel passes the KernelContext
// of its own step: the block runs on that step's Runtime, in the same slot array, so
// binding a parameter or taking a return is a slot access, not a copy of the frame.
#include <ATen/core/ivalue.h>

#include <cstddef>

namespace brisk {

class KernelContext;

class BlockRunner {
 public:
  virtual ~BlockRunner() = default;

  virtual size_t numParams() const = 0;
  virtual size_t numReturns() const = 0;
  // Parameter i, to bind before run() (prim::Loop's trip count and carried values) or
  // to move out after it. Plain block parameters only: a prim::If branch has none.
  virtual c10::IValue& param(const KernelContext& ctx, size_t i) const = 0;
  // Runs the block's steps serially on ctx's Runtime, inside ctx's step: an error names
  // the nested node that failed.
  virtual void run(const KernelContext& ctx) const = 0;
  // Return i after run(), read in place (a loop's condition).
  virtual const c10::IValue& peekReturn(const KernelContext& ctx, size_t i) const = 0;
  // Return i after run(): moved out when the block defined it and returns it only there,
  // copied otherwise (an outer value, a constant, or a value returned twice). Take the
  // returns in ascending order.
  virtual c10::IValue takeReturn(const KernelContext& ctx, size_t i) const = 0;
  // run(), then every return into ctx's outputs in order: prim::If's branch, a
  // delegate's fallback.
  virtual void runInto(const KernelContext& ctx) const = 0;
};

}  // namespace brisk
