#pragma once
// The elementwise ops ops_cpu::fused_pointwise (fused_pointwise.h) can run, shared by the
// graph pass that forms groups (elementwise_fusion.h, through pointwiseNodeProblem) and the
// compiler that turns a group into a pw::Program (pointwise_compiler.h): how each op key
// reads its inputs and which interpreter instruction computes it, and how a constant
// argument is read. No torch here: values are forward-declared.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ops_cpu/simd/pointwise_program.h"

namespace brisk {
class Value;
}  // namespace brisk

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
  kGelu,         // (self, approximate = "tanh" constant)
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

// The value of a constant int or float argument; nullopt for anything else.
std::optional<double> constNumber(const Value* v);

}  // namespace brisk::ops_cpu::pointwise
