#pragma once
// The compiler from a group of elementwise nodes (ops_cpu::fused_pointwise's steps,
// fused_pointwise.h) to a pw::Program (simd/pointwise_program.h), with what the kernel
// needs to feed it: how each program input is read and which outputs and in-place steps
// need a shape check per call. The graph pass asks it whether a group compiles
// (pointwiseGroupProblem); the kernel compiles its node once at load.
//
// dtype rules, with every tensor input fp32 (checked per call): arithmetic, clamp and the
// activations of an fp32 tensor and a scalar or fp32 tensor are fp32 (a Python scalar, or
// a 0-dim constant tensor as the PT2 frontend passes scalars, is cast to float first, as
// ATen's type promotion does); comparisons give bool; where(bool, fp32 | scalar, fp32 |
// scalar) with at least one tensor is fp32. A 0-dim double constant only stays below fp32
// when the other operand has a dimension, so a program holding one needs every tensor
// input to have one. Anything else (bool arithmetic, integer tensors...) is not fused.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ops_cpu/fused/fused_pointwise.h"
#include "ops_cpu/simd/pointwise_program.h"

namespace brisk::ops_cpu::pointwise {

// What an input of the fused node is to the program.
enum class InKind : uint8_t { kNone, kTensor, kScalar, kConstScalar };

struct InputPlan {
  InKind kind = InKind::kNone;
  float value = 0.0f;            // kConstScalar
  bool needs_rank = false;       // a 0-dim double constant (see the file comment)
  std::vector<int64_t> shape;    // kConstScalar from a one-element fp32 tensor: its sizes
  bool shaped = false;
};

// The compiled group.
struct Compiled {
  pw::Program program;
  std::vector<InputPlan> inputs;  // per program input
  std::vector<int> source;        // per program input: the fused node's input
  std::vector<uint64_t> deps;     // per output: program inputs it depends on (bit mask)
  // Per in-place step with a second operand: (self's deps, the result's deps). ATen
  // refuses an in-place op whose result would be bigger than self; the fused loop checks
  // the shapes are equal and otherwise leaves the call to the original ops (and their error).
  std::vector<std::pair<uint64_t, uint64_t>> inplace_checks;
  bool needs_rank = false;
};

// Compiles the group into `c`; returns why it cannot ("" when it can, `c` then complete).
// `inputs` are the values the fused node reads.
std::string compile(const std::vector<PointwiseStep>& steps, const std::vector<Value*>& inputs,
                    const std::vector<int>& outs, Compiled& c);

}  // namespace brisk::ops_cpu::pointwise
