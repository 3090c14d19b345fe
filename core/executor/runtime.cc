#include "core/executor/runtime.h"

#include <ATen/core/grad_mode.h>

#include "core/common/error.h"
#include "core/plan/execution_plan.h"
#include "core/graph/graph.h"
#include "core/executor/compiled_module.h"
#include "core/memory/block_memory.h"
#include "core/memory/output_arena.h"
#include "core/executor/parallel_executor.h"
#include "core/executor/profiler.h"
#include "core/executor/step_call.h"

namespace brisk {

namespace {
const RunOptions kNoRunOptions;
}  // namespace

Runtime::Runtime(const CompiledModule& module, std::shared_ptr<const CompiledModule> keepalive)
    : module_(&module),
      keepalive_(std::move(keepalive)),
      plan_(module.plan()),
      slots_(plan_.num_slots),
      run_options_(&kNoRunOptions),
      kernel_states_(plan_.num_kernel_states) {
  for (const auto& [slot, value] : plan_.constants) slots_[slot] = value;
  for (uint32_t p : plan_.blocks.front().params) input_ptrs_.push_back(&slots_[p]);
  for (const ExecBlock& b : plan_.blocks) {
    if (b.managed.empty()) continue;
    memory_.resize(plan_.blocks.size());
    memory_[b.id] = std::make_unique<BlockMemory>(b, *plan_.layout, module.options().plan_kernel_scratch);
  }
  const ExecBlock& top = plan_.blocks.front();
  if (top.parallel) parallel_ = std::make_unique<ParallelExecutor>(*this, top, module.options().max_parallel_ops);
  if (module.options().manage_output_tensors) output_arena_ = std::make_unique<OutputArena>(plan_);
}

Runtime::~Runtime() = default;

std::vector<c10::IValue>& Runtime::scratch() {
  thread_local std::vector<c10::IValue> s;
  return s;
}

void Runtime::runBlock(const ExecBlock& block) {
  // The block's memory plan brackets whichever executor runs it: prepare serves the
  // slab, abort gives it back on an error, finish re-plans when tensors outgrew it.
  BlockMemory* mem = memory_.empty() ? nullptr : memory_[block.id].get();
  if (mem) mem->prepare(slots_.data());
  try {
    if (block.parallel && parallel_)
      parallel_->run(run_options_->profiler != nullptr);
    else if (run_options_->profiler)
      runSteps<true>(block);
    else
      runSteps<false>(block);
  } catch (...) {
    if (mem) mem->abort(slots_.data());
    throw;
  }
  if (mem && mem->finish(slots_.data())) memory_changed_.store(true, std::memory_order_relaxed);
}

// The serial executor: one flat loop over the block's steps. The profiled instance adds
// two clock reads and a record per step; the plain one has no per-step branch for it.
template <bool kProfile>
void Runtime::runSteps(const ExecBlock& block) {
  c10::IValue* slots = slots_.data();
  const uint32_t* idx = plan_.indices.data();
  const Step* step = block.steps.data();
  const Step* const end = step + block.steps.size();
  try {
    for (; step != end; ++step) {
      callStep<kProfile>(*this, slots, idx, *step);
      const uint32_t* rel = idx + step->release_begin;
      for (uint32_t i = 0; i < step->num_release; ++i) slots[rel[i]] = c10::IValue();
    }
  } catch (...) {
    rethrowNamingStep(*step);
  }
}

MemoryStats Runtime::memoryStats() const {
  MemoryStats s;
  for (const auto& m : memory_)
    if (m) m->addStats(s);
  if (output_arena_) output_arena_->addStats(s);
  return s;
}

void Runtime::addForkClaim(const void* future, std::shared_ptr<ForkClaim> claim) {
  std::lock_guard<std::mutex> lock(forks_mu_);
  forks_.emplace_back(future, std::move(claim));
}

std::shared_ptr<ForkClaim> Runtime::takeForkClaim(const void* future) {
  std::lock_guard<std::mutex> lock(forks_mu_);
  for (auto it = forks_.begin(); it != forks_.end(); ++it)
    if (it->first == future) {
      std::shared_ptr<ForkClaim> c = std::move(it->second);
      forks_.erase(it);
      return c;
    }
  return nullptr;
}

void Runtime::cleanup() {
  for (uint32_t s : plan_.cleanup) slots_[s] = c10::IValue();
  {
    std::lock_guard<std::mutex> lock(forks_mu_);
    forks_.clear();
  }
  run_options_ = &kNoRunOptions;
}

c10::IValue Runtime::run(std::vector<c10::IValue> args, const Kwargs& kwargs, const RunOptions& options) {
  run_options_ = &options;
  const int64_t t0 = options.profiler ? Profiler::now() : 0;
  // Inference only: no autograd graph is recorded (models whose code checks
  // grad mode, like TransformerEncoder's fast path, take their inference branch).
  at::AutoGradMode no_grad(false);
  const Signature& sig = module_->signature();
  LearnedInputs& specs = module_->learnedInputs();
  const bool strict = module_->options().strict_inputs;
  const ExecBlock& top = plan_.blocks.front();
  std::vector<TensorSpec> observed;
  c10::IValue result;
  try {
    sig.bind(args, kwargs, input_ptrs_.data());
    if (strict) {
      specs.check(input_ptrs_.data());
      if (!specs.learned()) observed = sig.observe(input_ptrs_.data());
    }
    if (output_arena_) output_arena_->prepare(slots_.data());
    runBlock(top);
    if (output_arena_) output_arena_->finish(slots_.data());
    if (top.returns.size() == 1) {
      result = top.takeReturn(slots_.data(), 0);
    } else {
      std::vector<c10::IValue> outs;
      for (size_t i = 0; i < top.returns.size(); ++i)
        outs.push_back(top.takeReturn(slots_.data(), i));
      result = c10::ivalue::Tuple::create(std::move(outs));
    }
  } catch (const Error& e) {
    cleanup();
    throw e.withModel(module_->name());
  } catch (const std::exception& e) {
    cleanup();
    throw Error(Error::Where{module_->name(), "", ""}, describeException(e));
  }
  cleanup();
  if (options.profiler) options.profiler->record(module_, nullptr, nullptr, t0, Profiler::now());
  if (memory_changed_.load(std::memory_order_relaxed)) {
    memory_changed_.store(false, std::memory_order_relaxed);
    module_->publishMemoryStats(memoryStats());
  }
  if (!observed.empty()) specs.learn(observed);
  ++runs_;
  return result;
}

}  // namespace brisk
