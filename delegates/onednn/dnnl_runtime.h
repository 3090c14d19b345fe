#pragma once
// oneDNN called directly (libdnnl 3.2 from @onednn, CPU, TBB runtime): the process's
// engine, and the per-Runtime state that runs primitives.
//
// Threads: oneDNN's TBB runtime uses as many threads as the arena it is called in
// allows. brisk's intra-op thread count is process-wide (at::get_num_threads(), which
// Options::intra_op_threads sets), so each Runtime runs its primitives inside its own
// TBB arena of that many slots: a one-thread benchmark runs oneDNN on one thread, and
// the Runtimes of a Module never share an arena (no lock between them).
//
// Calls go through oneDNN's C API with a fixed argument array, so running a primitive
// allocates nothing (the C++ API's std::unordered_map of arguments would).
#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/tbb/task_arena.h>

#include <memory>

#include "core/kernels/kernel.h"

namespace brisk::onednn {

// The CPU engine, made on first use.
const dnnl::engine& cpuEngine();

// Throws std::runtime_error, naming the library file and the set-up step, when the
// libdnnl this process loaded is not oneDNN 3.2 or later on the TBB runtime.
void checkLibrary();

class DnnlState : public KernelState {
 public:
  DnnlState();
  ~DnnlState() override;
  // Runs `p` with `args` on this Runtime's stream, in its arena (resized when the
  // intra-op thread count changed since the last call).
  void execute(const dnnl::primitive& p, const dnnl_exec_arg_t* args, int nargs);
  // Runs a reorder primitive from `from` to `to` the same way.
  void reorder(const dnnl::reorder& r, const dnnl::memory& from, const dnnl::memory& to) {
    const dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, from.get()}, {DNNL_ARG_TO, to.get()}};
    execute(r, args, 2);
  }

 private:
  dnnl::stream stream_;
  int threads_ = 0;
  std::unique_ptr<tbb::task_arena> arena_;
};

// A oneDNN memory object over no buffer yet: the call points it at a tensor's data.
dnnl::memory unboundMemory(const dnnl::memory::desc& md);
// The same for a primitive's user-mode scratchpad of `bytes`.
dnnl::memory unboundScratchpad(size_t bytes);

// A byte buffer of md's size, or a scratchpad of `bytes` (undefined when 0), from the
// c10 allocator, which brisk serves from its memory plan; `like` gives the device.
at::Tensor bufferFor(const dnnl::memory::desc& md, const at::Tensor& like);
at::Tensor scratchFor(size_t bytes, const at::Tensor& like);

}  // namespace brisk::onednn
