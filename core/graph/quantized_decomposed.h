#pragma once
// The quantize / dequantize operators of PT2E programs (torch.ao / torchao's
// prepare_pt2e + convert_pt2e: `quantized_decomposed::quantize_per_tensor`,
// `dequantize_per_tensor`, `dequantize_per_channel`, ...). PyTorch defines them in Python
// (torch/ao/quantization/fx/_decomposed.py, a torch.library registered on import), so a
// C++ process has neither their schemas nor their kernels. brisk keeps both here: the
// PT2 frontend takes the schema from this table when the dispatcher has none, constant
// folding computes them at load (a weight's dequantize_per_channel becomes its float
// weight once), and core's native kernels run the rest.
//
// The arithmetic is PyTorch's reference, op for op (the same ATen calls in the same
// order), so results are bit for bit those of the program's ep.module().
#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <vector>

namespace brisk {

// "quantized_decomposed::" ops this table serves.
bool isQuantizedDecomposed(const std::string& op_name);

// The keys ("quantized_decomposed::<name>[.<overload>]") of every op the table has, for
// the kernel registration.
std::vector<std::string> quantizedDecomposedKeys();

// The schema of `name` (an op of the table, any overload it has), or null.
const c10::FunctionSchema* quantizedDecomposedSchema(const c10::OperatorName& name);

// The ops, resolved once from a node's key ("quantized_decomposed::<name>[.<overload>]")
// so that a kernel compares no strings per call.
enum class QuantizedOp {
  kQuantizePerTensor,      // scale / zero point as numbers, or one-element tensors (.tensor)
  kDequantizePerTensor,    // likewise
  kQuantizePerChannel,
  kDequantizePerChannel,
};
std::optional<QuantizedOp> quantizedOpFor(const std::string& key);

// Runs `op` on `args` (in schema order; `key` names it in errors). Throws brisk::Error
// where PyTorch's reference asserts: an input of the wrong dtype, an axis out of range,
// a scale tensor of more than one element.
at::Tensor runQuantizedDecomposed(QuantizedOp op, c10::ArrayRef<c10::IValue> args, const std::string& key);

}  // namespace brisk
