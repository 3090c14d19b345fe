#pragma once
// ops_cpu::fused_pointwise: a group of connected elementwise nodes run as one node
// (created by the graph pass ops_cpu.fuse_pointwise, elementwise_fusion.h). The node has
// no block: it reads the group's inputs (tensors, scalars, constants) and carries the
// group as attributes:
//
//   "ops":  str[]  the original nodes' op keys ("aten::add.Tensor", "aten::relu_"), in order
//   "args": int[]  per original node, its input count, then each input: k >= 0 reads the
//                  fused node's input k, k < 0 the result of original node -k - 1
//   "outs": int[]  per output of the fused node, the original node producing it
//
// The kernel compiles the group into a pw::Program (simd/pointwise_program.h) at load
// (pointwise_compiler.h, over the op table of pointwise_ops.h) and, per call, checks
// cheaply that every tensor input is a contiguous fp32 CPU tensor that is the full output
// shape, a one-element tensor or a trailing-dimension vector (and each output has the full
// shape); then it runs the program over the elements. Anything else runs the original
// operators one by one through the dispatcher: the same results and errors as the unfused
// graph, only slower.
#include <cstddef>
#include <string>
#include <vector>

#include "core/kernels/plugin.h"

namespace c10 {
struct FunctionSchema;
}
namespace brisk {
class Node;
class Value;
}  // namespace brisk

namespace brisk::ops_cpu {

constexpr const char* kFusedPointwiseKind = "ops_cpu::fused_pointwise";

// One original node of a group, in the attribute encoding above.
struct PointwiseStep {
  std::string key;
  std::vector<int> args;
};

// Why a node with op key `key` and these inputs cannot join a group ("" when it can, as
// far as the node alone decides: its op is one the interpreter has and its non-tensor
// arguments are constants it supports). Defined in pointwise_ops.cc.
std::string pointwiseNodeProblem(const Node& n);

// Why this group cannot be compiled ("" when it can): the dtype rules of the ops, given
// that every tensor input is fp32 (checked at run time). `inputs` are the values the
// fused node reads. Defined in pointwise_compiler.cc.
std::string pointwiseGroupProblem(const std::vector<PointwiseStep>& steps, const std::vector<Value*>& inputs,
                                  const std::vector<int>& outs);

// The schema of a fused node with this many inputs and outputs:
// "ops_cpu::fused_pointwise(Any i0, ...) -> (Tensor, ...)", with no alias annotations, so
// escape analysis knows the outputs are fresh tensors and effects.h that the node only
// computes (an in-place op inside writes a tensor made in the group). Not registered with
// the dispatcher (no TorchScript operator runs it); kept for the process's lifetime.
const c10::FunctionSchema* fusedPointwiseSchema(size_t inputs, size_t outputs);

void registerFusedPointwise(PluginRegistrar& r);

}  // namespace brisk::ops_cpu
