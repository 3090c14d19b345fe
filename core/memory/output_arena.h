#pragma once
// Options::manage_output_tensors (off by default; Static Runtime's option of the same
// name): the model's output tensors that out-variant kernels produce are written into a
// separate output arena, one block holding all of them, instead of fresh allocations.
//
// The arena is reused by the next run only once the caller has released every tensor
// the previous run returned (the arena keeps a reference to each and checks that it is
// the only one, for the tensor and its storage, so a view the caller kept counts too).
// If the caller still holds any of them the next run gets a second block and the old
// block lives on until the caller lets go of the last tensor pointing into it: each
// storage placed in a block holds a reference to that block. Returned tensors are
// therefore never overwritten and never dangle.
//
// Sizes come from the first run (outputs allocated as usual); a later run whose output
// outgrew its place (the kernel reallocated it) leads to a new layout. Outputs whose
// kernel does not write into the tensor it is given (e.g. one that allocates its
// result) are dropped from the arena after the first run that shows it.
#include <ATen/core/ivalue.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/memory/memory_plan.h"

namespace brisk {

struct ExecutionPlan;

class OutputArena {
 public:
  explicit OutputArena(const ExecutionPlan& plan);
  ~OutputArena();
  OutputArena(const OutputArena&) = delete;
  OutputArena& operator=(const OutputArena&) = delete;

  // Before the top block runs: puts a tensor backed by the arena into each managed
  // output slot (the reused tensors of the previous run when the caller released them).
  void prepare(c10::IValue* slots);
  // After the top block ran, before its results are taken: keeps a reference to each
  // managed output (to see later whether the caller released it) and records sizes.
  void finish(c10::IValue* slots);

  void addStats(MemoryStats& s) const;
  size_t managedOutputs() const { return outputs_.size(); }

  struct Block;  // refcounted memory (see the top)

 private:
  // One managed output of the model.
  struct Output {
    uint32_t slot;
    c10::ScalarType dtype = c10::ScalarType::Undefined;
    size_t bytes = 0, offset = 0;  // its place in the block
    bool active = true;            // false: dropped (its kernel ignores the given tensor)
    at::Tensor held;               // what the previous run returned (or undefined)
    c10::TensorImpl* given = nullptr;  // the tensor put into its slot this run
  };
  void layout();
  void newBlock();

  std::vector<Output> outputs_;
  Block* block_ = nullptr;  // current block (the arena's reference)
  size_t total_ = 0;
  bool sized_ = false, relayout_ = false;
  uint64_t reuses_ = 0, second_blocks_ = 0;
};

}  // namespace brisk
