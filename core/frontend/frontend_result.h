#pragma once
// What a frontend (TorchScript, PT2) hands the executor: brisk's graph of the model's
// forward, its signature, and what must live as long as the graph does.
#include <memory>
#include <vector>

#include "core/frontend/weights.h"
#include "core/graph/signature.h"

namespace brisk {

class Graph;

struct FrontendResult {
  std::shared_ptr<Graph> graph;
  Signature signature;
  // Owns what the frontend built the graph from and kernels still reach at load (the
  // TorchScript frontend: the torch::jit::Graph and Module behind the fallback kernel).
  std::shared_ptr<void> keepalive;
  // The file's named weights (what `replacements` may name), in the file's order.
  std::vector<WeightInfo> weights;
};

}  // namespace brisk
