#pragma once
// An ExportedProgram's JSON graph -> brisk's Graph.
//
// Parameters, buffers and tensor constants become Graph constants (load-time values).
// The graph's inputs are the exported forward's arguments and keyword arguments with
// their pytree structure; nodes flatten them into the program's user inputs, and
// nodes rebuild its outputs by the out_spec. Each `torch.ops.<ns>.<op>.<overload>`
// node becomes a Node matched to the c10 schema of that operator, its arguments bound
// by name and completed with the schema's defaults.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/frontend/pt2/schema.h"
#include "core/graph/signature.h"

namespace at {
class Tensor;
}

namespace brisk {
class Graph;
}

namespace brisk::pt2 {

struct BuiltProgram {
  std::shared_ptr<Graph> graph;
  std::vector<Argument> args;  // one per graph input, in order
  // The compiled regions its brisk::call_delegate nodes name (core/graph/call_delegate.h).
  std::vector<std::string> delegate_calls;
};

// Throws brisk::Error (without the model; node and op where known) for whatever
// brisk cannot run: higher-order ops other than cond and while_loop, mutated buffers, unknown operators, CUDA
// programs, malformed JSON. fold_batch_norm: Options::optimize_numerics (folding.h).
BuiltProgram buildGraph(const Json& program, const std::unordered_map<std::string, at::Tensor>& state,
                        const std::string& graph_name, bool fold_batch_norm);

}  // namespace brisk::pt2
