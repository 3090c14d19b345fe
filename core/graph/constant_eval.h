#pragma once
// Computing an operator at load, on constants: what constant folding (the PT2 builder
// and the fold_constants pass) runs instead of adding a node that would give the same
// tensors every run.
#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>

#include <optional>
#include <string>
#include <vector>

#include "core/graph/effects.h"  // nondeterministic

namespace brisk {

class Graph;
class Value;

// The results of `name` on `inputs` computed now, or nullopt when the node is not
// foldable: an input is not constant, or the op is not a functional, deterministic
// ATen op with tensor results that the dispatcher has.
std::optional<std::vector<at::Tensor>> evaluateAtLoad(const c10::OperatorName& name, const c10::FunctionSchema& schema,
                                                      const std::vector<Value*>& inputs);

// Adds `t`, a result of folding `name` on `inputs`, to `g` as a constant. The folds of
// PT2E's quantize / dequantize ops keep their inputs on record (Graph::FoldedFrom): an
// int8 kernel takes a weight's integers and scales rather than its float values.
Value* addFoldedConstant(Graph& g, const c10::OperatorName& name, const std::vector<Value*>& inputs,
                         const at::Tensor& t);

}  // namespace brisk
