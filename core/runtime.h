#pragma once
// A Runtime is one in-flight request's state for a Module: the IValue slot array (with
// the Module's constants copied in once), retained out-variant outputs, and per-run
// scratch. Not thread-safe: one caller at a time. Module::run borrows one from a pool;
// embedders that manage threads themselves may hold their own.
#include <ATen/core/ivalue.h>

#include <memory>
#include <vector>

#include "core/memory_plan.h"
#include "core/signature.h"

namespace brisk {

class BlockMemory;
class Module;
struct ExecBlock;
struct ExecutionPlan;

class Runtime {
 public:
  // `keepalive` holds the Module for standalone runtimes; pooled runtimes (owned by
  // the Module itself) pass null to avoid a reference cycle.
  Runtime(const Module& module, std::shared_ptr<const Module> keepalive);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Runs the model. Args are moved from. Returns the model's output (a tensor, tuple,
  // list or dict). Throws brisk::Error naming the model (and node, op) on failure; the
  // Runtime stays usable afterwards.
  c10::IValue run(std::vector<c10::IValue> args, const Kwargs& kwargs = {});

  const Module& module() const { return *module_; }
  uint64_t runs() const { return runs_; }
  // Slabs of this Runtime's blocks (memory planning), summed over blocks.
  MemoryStats memoryStats() const;

  // --- For kernels (hot path) ------------------------------------------------------
  // Runs one block of this Runtime's plan with the serial executor.
  void runBlock(const ExecBlock& block);
  c10::IValue* slots() { return slots_.data(); }
  // A reusable stack for boxed calls; callers leave it empty when done.
  std::vector<c10::IValue>& stack() { return stack_; }
  // Reusable scratch for control-flow kernels (moving values between block slots).
  std::vector<c10::IValue>& scratch() { return scratch_; }

 private:
  void cleanup();

  const Module* module_;
  std::shared_ptr<const Module> keepalive_;
  const ExecutionPlan& plan_;
  std::vector<c10::IValue> slots_;
  std::vector<c10::IValue*> input_ptrs_;
  std::vector<c10::IValue> stack_;
  std::vector<c10::IValue> scratch_;
  // Per ExecBlock id: the block's slab and managed tensors; null without any.
  std::vector<std::unique_ptr<BlockMemory>> memory_;
  bool memory_changed_ = false;  // a block (re)planned during this run
  uint64_t runs_ = 0;
};

}  // namespace brisk
