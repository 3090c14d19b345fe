#pragma once
// Run-time half of the parallel executor (see parallel_plan.h): dependency counting on
// the inter-op arena. The calling thread runs steps too; a finished step makes its
// successors ready, keeps one to run next itself and hands the others to new arena
// tasks while fewer than max_parallel_ops workers are active, else to a shared ready
// stack that active workers drain. Per run: atomics only (no lock per node, no
// allocation beyond TBB's task objects); the run ends when the last worker leaves.
#include <atomic>
#include <exception>
#include <memory>
#include <mutex>

#include "threading/inter_op_arena.h"

namespace brisk {

class BlockMemory;
class Runtime;
struct ExecBlock;
struct ParallelSchedule;
struct Step;

class ParallelExecutor {
 public:
  ParallelExecutor(Runtime& rt, const ExecBlock& block, int max_workers);
  ~ParallelExecutor();

  // Runs every step of the block; rethrows the first step error (naming its node).
  void run(bool profile);

 private:
  void work(int32_t first);  // a worker's life: drain, then leave
  void drain(int32_t cur);   // runs ready steps until none is left for this worker
  void runStep(uint32_t i);
  void schedule(uint32_t i);
  void push(uint32_t i);
  int32_t pop();
  void leave();

  Runtime& rt_;
  const ExecBlock& block_;
  const ParallelSchedule& sched_;
  const int max_workers_;
  bool profile_ = false;

  std::unique_ptr<std::atomic<uint32_t>[]> pending_;  // per step: unfinished predecessors
  std::unique_ptr<std::atomic<uint32_t>[]> readers_;  // per release counter
  std::unique_ptr<int32_t[]> next_;                   // ready-stack links, per step
  std::atomic<int32_t> head_{-1};                     // ready stack (each step pushed once per run)
  std::atomic<int32_t> workers_{0};
  std::atomic<bool> failed_{false};
  std::mutex error_mu_;  // taken only on the error path
  std::exception_ptr error_;
  const Step* error_step_ = nullptr;
  threading::Event done_;
};

}  // namespace brisk
