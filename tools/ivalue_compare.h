#pragma once
// Comparing and summarizing model outputs (tensors, tuples, lists, dicts).
#include <ATen/core/ivalue.h>

#include <string>

namespace brisk {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-8;
};

// "" when equal (tensors: same dtype/shape, allclose; others: ==), else the first
// difference with its path, e.g. "[1]['a']: max abs diff 0.3 at ...".
std::string compareIValues(const c10::IValue& actual, const c10::IValue& expected, Tolerance tol = {},
                           const std::string& path = "output");

// Shapes and a checksum per tensor, one line: "(Tensor[1, 1000] sum=-3.1416, ...)".
std::string summarizeIValue(const c10::IValue& v);

}  // namespace brisk
