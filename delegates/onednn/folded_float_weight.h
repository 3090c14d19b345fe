#pragma once
// The graph's float weight of a PT2E layer that an int8 partition runs: constant folding
// computed it from the program's int8 weight and scales (Graph::FoldedFrom), and only
// the partition's nested block (its fallback) would ever read it. When nothing else
// reads it (Partition::releasable), its bytes are given back at compile time and
// computed again from the integers, with the fold's own arithmetic, bit for bit, before
// the nested block first runs (resnet18.int8: 45 MiB of float weights not held).
#include <ATen/core/Tensor.h>

#include <atomic>
#include <mutex>

#include "core/graph/graph.h"

namespace brisk::onednn {

class FoldedFloatWeight {
 public:
  // `weight`: the anchor's weight input, folded as `from` says.
  FoldedFloatWeight(const Value* weight, const Graph::FoldedFrom& from, bool releasable);
  // Makes the bytes readable for good. Cheap after the first call: one atomic load.
  void restore();
  bool released() const;

 private:
  at::Tensor dense_;
  Graph::FoldedFrom from_;
  mutable std::mutex mu_;
  bool released_ = false;
  std::atomic<bool> pinned_{false};
};

}  // namespace brisk::onednn
