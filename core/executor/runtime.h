#pragma once
// A Runtime is one in-flight request's state for a Module: the IValue slot array (with
// the Module's constants copied in once), retained out-variant outputs, and per-run
// scratch. Not thread-safe: one caller at a time. Module::run borrows one from a pool;
// embedders that manage threads themselves may hold their own.
#include <ATen/core/ivalue.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "core/memory/memory_plan.h"
#include "core/executor/run_options.h"
#include "core/graph/signature.h"
#include "core/kernels/kernel.h"  // KernelState

namespace brisk {

class BlockMemory;
class CompiledModule;
class OutputArena;
class ParallelExecutor;
struct ExecBlock;
struct ExecutionPlan;

// A prim::fork task that whoever gets to it first runs: the launcher's thread, or the
// thread that needs its result (aten::wait) when the launcher has not started it yet —
// so a fork is never slower than running it inline because a worker was slow to wake.
struct ForkClaim {
  std::atomic<bool> claimed{false};
  Task body;
  void runIfUnclaimed() {
    if (claimed.exchange(true, std::memory_order_acq_rel)) return;
    // The thread that runs the body drops its captures (child, arguments, future) as
    // soon as it returns, instead of when the claim is released at the end of the run:
    // the fork's argument tensors are freed as early as the interpreter frees them.
    Task run;
    run.swap(body);
    run();
  }
};

class Runtime {
 public:
  // `keepalive` holds the module for standalone runtimes; pooled runtimes (owned by
  // the module itself) pass null to avoid a reference cycle.
  Runtime(const CompiledModule& module, std::shared_ptr<const CompiledModule> keepalive);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Runs the model. Args are moved from. Returns the model's output (a tensor, tuple,
  // list or dict). Throws brisk::Error naming the model (and node, op) on failure; the
  // Runtime stays usable afterwards. `options` must outlive the call.
  c10::IValue run(std::vector<c10::IValue> args, const Kwargs& kwargs = {}, const RunOptions& options = {});

  const CompiledModule& module() const { return *module_; }
  uint64_t runs() const { return runs_; }
  // Slabs of this Runtime's blocks (memory planning), summed over blocks.
  MemoryStats memoryStats() const;

  // --- For core's own kernels (hot path) -------------------------------------------
  // The Runtime a step runs on (plugins have no use for it: KernelContext hides it).
  static Runtime& of(const KernelContext& ctx) { return ctx.rt_; }
  // Runs one block of this Runtime's plan (serially; the top block may run on the
  // parallel executor, see Options::max_parallel_ops).
  void runBlock(const ExecBlock& block);
  c10::IValue* slots() { return slots_.data(); }
  // The current run's per-call options (fork kernels launch with them).
  const RunOptions& runOptions() const { return *run_options_; }
  // Reusable scratch for control-flow kernels (moving values between block slots); per
  // thread, and a kernel must not hold it across a nested runBlock.
  static std::vector<c10::IValue>& scratch();
  // Forks launched during the current run, by their future (see ForkClaim). A short lock
  // per fork and per wait, never per node; forgotten at the end of the run.
  void addForkClaim(const void* future, std::shared_ptr<ForkClaim> claim);
  std::shared_ptr<ForkClaim> takeForkClaim(const void* future);
  // Per-Runtime state of kernel `i` (KernelBuildContext::reserveKernelState), empty until
  // the kernel first fills it; lives as long as this Runtime. An index, not a lookup.
  std::unique_ptr<KernelState>& kernelState(uint32_t i) { return kernel_states_[i]; }

 private:
  template <bool kProfile>
  void runSteps(const ExecBlock& block);
  void cleanup();

  const CompiledModule* module_;
  std::shared_ptr<const CompiledModule> keepalive_;
  const ExecutionPlan& plan_;
  std::vector<c10::IValue> slots_;
  std::vector<c10::IValue*> input_ptrs_;
  const RunOptions* run_options_;
  // Per ExecBlock id: the block's slab and managed tensors; null without any.
  std::vector<std::unique_ptr<BlockMemory>> memory_;
  std::mutex forks_mu_;
  std::vector<std::pair<const void*, std::shared_ptr<ForkClaim>>> forks_;
  std::unique_ptr<ParallelExecutor> parallel_;  // for the top block, when it has a DAG
  std::unique_ptr<OutputArena> output_arena_;  // Options::manage_output_tensors
  std::vector<std::unique_ptr<KernelState>> kernel_states_;  // by ExecutionPlan::num_kernel_states
  std::atomic<bool> memory_changed_{false};  // a block (re)planned during this run
  uint64_t runs_ = 0;
};

}  // namespace brisk
