#pragma once
// One step of a block, as both executors run it: the kernel on a frame of the Runtime's
// slots, timed into the run's profiler when the run has one; and the rule by which an
// error leaving a step is named after the step's node.
#include "core/executor/profiler.h"
#include "core/executor/run_options.h"
#include "core/executor/runtime.h"
#include "core/plan/execution_plan.h"

namespace brisk {

// kProfile is a template argument so that the unprofiled loop has no branch for it.
template <bool kProfile>
inline void callStep(Runtime& rt, c10::IValue* slots, const uint32_t* idx, const Step& step) {
  KernelContext ctx(rt, slots, idx + step.in_begin, step.num_in, idx + step.out_begin, step.num_out);
  if constexpr (kProfile) {
    const int64_t t0 = Profiler::now();
    step.kernel->run(ctx);
    rt.runOptions().profiler->record(&rt.module(), step.node, step.kernel, t0, Profiler::now());
  } else {
    step.kernel->run(ctx);
  }
}

// Call from a catch block: rethrows the exception in flight as a brisk::Error naming
// `step`'s node and op. An error from a nested block already names its (inner) node and
// passes unchanged; exceptions not derived from std::exception pass unchanged too.
[[noreturn]] void rethrowNamingStep(const Step& step);

}  // namespace brisk
