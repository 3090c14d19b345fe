#pragma once
// Comparing and summarizing model outputs (tensors, tuples, lists, dicts).
#include <ATen/core/ivalue.h>

#include <string>

namespace brisk {

// Floating tensors match when |actual - expected| <= atol_eff + rtol * |expected|
// element-wise, with atol_eff = atol + atol_scale * (largest finite |expected| of that
// tensor). The scaled term is what makes fp32 comparisons meaningful across kernels
// that sum in another order (a product over K terms carries rounding errors relative
// to the terms' size, not to the result's: an output that cancels to near 0 is as
// uncertain as its largest neighbours). {0, 0, 0} demands equal bits.
struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-8;
  double atol_scale = 1e-6;
};

// "" when equal (tensors: same dtype/shape, allclose; others: ==), else the first
// difference with its path, e.g. "[1]['a']: max abs diff 0.3 at ...".
std::string compareIValues(const c10::IValue& actual, const c10::IValue& expected, Tolerance tol = {},
                           const std::string& path = "output");

// Shapes and a checksum per tensor, one line: "(Tensor[1, 1000] sum=-3.1416, ...)".
std::string summarizeIValue(const c10::IValue& v);

}  // namespace brisk
