#pragma once
// The elementwise ops ops_cpu::fused_pointwise (fused_pointwise.h) can run, shared by the
// graph pass that forms groups (elementwise_fusion.h, through pointwiseNodeProblem) and the
// compiler that turns a group into a pw::Program (pointwise_compiler.h): how each op key
// reads its inputs and which interpreter instruction computes it (constant arguments are
// read with constantNumber, core/graph/graph.h). No torch here.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ops_cpu/simd/pointwise_program.h"

namespace brisk::ops_cpu::pointwise {

// How an op of the table reads its inputs.
enum class Form : uint8_t {
  kArithAlpha,   // (self, other, alpha=1) -> self op other
  kRsubAlpha,    // (self, other, alpha=1) -> other - self
  kBinary,       // (self, other)
  kCompare,      // (self, other) -> bool
  kWhere,        // (cond, self, other)
  kUnary,        // (self)
  kClamp,        // (self, min?, max?) constants or None
  kClampMin,     // (self, min)
  kClampMax,     // (self, max)
  kRelu6,        // (self)
  kLeakyRelu,    // (self, slope constant)
  kGelu,         // (self, approximate = "none" | "tanh" constant)
  kPowScalar,    // (self, exponent constant) with an exponent ATen computes exactly
};

struct OpInfo {
  Form form;
  pw::Op op;
  size_t inputs;
};

struct ParsedKey {
  const OpInfo* info = nullptr;
  bool inplace = false;
};

// "aten::add_.Tensor" -> add.Tensor, in place. info is null for an op not in the table.
ParsedKey parseKey(const std::string& key);

}  // namespace brisk::ops_cpu::pointwise
