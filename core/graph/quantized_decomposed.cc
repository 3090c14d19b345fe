#include "core/graph/quantized_decomposed.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include <memory>
#include <unordered_map>

#include "core/common/error.h"

namespace brisk {
namespace {

constexpr const char* kNamespace = "quantized_decomposed::";

// PyTorch's schemas (torch/ao/quantization/fx/_decomposed.py), for the ops brisk runs.
const char* const kSchemas[] = {
    "quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) "
    "-> Tensor",
    "quantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, "
    "ScalarType dtype) -> Tensor",
    "dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, "
    "*, ScalarType? out_dtype=None) -> Tensor",
    "dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, "
    "ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
    "quantize_per_channel(Tensor input, Tensor scales, Tensor zero_points, int axis, int quant_min, int quant_max, "
    "ScalarType dtype) -> Tensor",
    "dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, "
    "ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor",
};

const std::unordered_map<std::string, c10::FunctionSchema>& table() {
  static const auto* t = [] {
    auto* m = new std::unordered_map<std::string, c10::FunctionSchema>();
    for (const char* s : kSchemas) {
      c10::FunctionSchema schema = torch::jit::parseSchema(std::string(kNamespace) + s);
      const c10::OperatorName& n = schema.operator_name();
      m->emplace(n.overload_name.empty() ? n.name : n.name + "." + n.overload_name, std::move(schema));
    }
    return m;
  }();
  return *t;
}

void checkDtype(const at::Tensor& t, at::ScalarType expected, const std::string& key) {
  if (t.scalar_type() != expected)
    throw Error(key + ": expected an input of dtype " + std::string(c10::toString(expected)) + ", got " +
                c10::toString(t.scalar_type()));
}

// PyTorch: float16 / bfloat16 inputs are taken as float32; anything else must be float32.
at::Tensor floatInput(const at::Tensor& x, const std::string& key) {
  const at::Tensor f = x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16 ? x.to(at::kFloat) : x;
  checkDtype(f, at::kFloat, key);
  return f;
}

// Moves `axis` to the front (PyTorch's _permute_to_axis_zero), and the permutation
// that moves it back.
std::pair<at::Tensor, std::vector<int64_t>> axisFirst(const at::Tensor& x, int64_t axis) {
  std::vector<int64_t> order(x.dim());
  for (int64_t i = 0; i < x.dim(); ++i) order[i] = i;
  order[0] = axis;
  order[axis] = 0;
  return {x.permute(order), order};
}

// A scale or zero point: a number, or (the .tensor overloads) a one-element tensor,
// which PyTorch's reference reads with .item().
c10::Scalar scalarArg(const c10::IValue& v, const std::string& key) {
  if (!v.isTensor()) return v.toScalar();
  const at::Tensor& t = v.toTensor();
  if (t.numel() != 1) throw Error(key + ": expected a one-element scale / zero point, got " + std::to_string(t.numel()));
  return t.item();
}

std::vector<int64_t> channelShape(const at::Tensor& x, int64_t channels) {
  std::vector<int64_t> shape(x.dim(), 1);
  shape[0] = channels;
  return shape;
}

}  // namespace

bool isQuantizedDecomposed(const std::string& op_name) { return op_name.rfind(kNamespace, 0) == 0; }

std::vector<std::string> quantizedDecomposedKeys() {
  std::vector<std::string> keys;
  for (const auto& [key, schema] : table()) keys.push_back(key);
  return keys;
}

const c10::FunctionSchema* quantizedDecomposedSchema(const c10::OperatorName& name) {
  if (!isQuantizedDecomposed(name.name)) return nullptr;
  auto it = table().find(name.overload_name.empty() ? name.name : name.name + "." + name.overload_name);
  return it == table().end() ? nullptr : &it->second;
}

std::optional<QuantizedOp> quantizedOpFor(const std::string& key) {
  if (!isQuantizedDecomposed(key)) return std::nullopt;
  const std::string op = key.substr(std::char_traits<char>::length(kNamespace));
  if (op == "quantize_per_tensor" || op == "quantize_per_tensor.tensor") return QuantizedOp::kQuantizePerTensor;
  if (op == "dequantize_per_tensor" || op == "dequantize_per_tensor.tensor") return QuantizedOp::kDequantizePerTensor;
  if (op == "quantize_per_channel") return QuantizedOp::kQuantizePerChannel;
  if (op == "dequantize_per_channel") return QuantizedOp::kDequantizePerChannel;
  return std::nullopt;
}

at::Tensor runQuantizedDecomposed(QuantizedOp op, c10::ArrayRef<c10::IValue> a, const std::string& key) {
  switch (op) {
  case QuantizedOp::kQuantizePerTensor: {
    const at::Tensor x = floatInput(a.at(0).toTensor(), key);
    const double scale = scalarArg(a.at(1), key).toDouble();
    const int64_t zero_point = scalarArg(a.at(2), key).toLong();
    return at::clamp(at::round(x * (1.0 / scale)) + zero_point, a.at(3).toInt(), a.at(4).toInt())
        .to(a.at(5).toScalarType());
  }
  case QuantizedOp::kDequantizePerTensor: {
    const at::Tensor& x = a.at(0).toTensor();
    checkDtype(x, a.at(5).toScalarType(), key);
    const at::ScalarType out = a.at(6).isNone() ? at::kFloat : a.at(6).toScalarType();
    const double scale = scalarArg(a.at(1), key).toDouble();
    const int64_t zero_point = scalarArg(a.at(2), key).toLong();
    return (x.to(out) - zero_point) * scale;
  }
  case QuantizedOp::kQuantizePerChannel: {
    const at::Tensor x = floatInput(a.at(0).toTensor(), key);
    const at::Tensor& scales = a.at(1).toTensor();
    const at::Tensor& zps = a.at(2).toTensor();
    const int64_t axis = a.at(3).toInt();
    if (axis < 0 || axis >= x.dim()) throw Error(key + ": axis " + std::to_string(axis) + " out of range");
    auto [xp, order] = axisFirst(x, axis);
    const std::vector<int64_t> shape = channelShape(xp, scales.size(0));
    const at::Tensor q = at::clamp(at::round(xp * (1.0 / scales.view(shape))) + zps.view(shape), a.at(4).toInt(),
                                   a.at(5).toInt());
    return q.permute(order).to(a.at(6).toScalarType());
  }
  case QuantizedOp::kDequantizePerChannel: {
    const at::Tensor& x = a.at(0).toTensor();
    checkDtype(x, a.at(6).toScalarType(), key);
    const at::ScalarType out = a.at(7).isNone() ? at::kFloat : a.at(7).toScalarType();
    const int64_t axis = a.at(3).toInt();
    if (axis < 0 || axis >= x.dim()) throw Error(key + ": axis " + std::to_string(axis) + " out of range");
    const at::Tensor& scales = a.at(1).toTensor();
    auto [xp, order] = axisFirst(x, axis);
    const std::vector<int64_t> shape = channelShape(xp, scales.size(0));
    const at::Tensor res = a.at(2).isNone() ? xp * scales.view(shape) : (xp - a.at(2).toTensor().view(shape)) * scales.view(shape);
    return res.to(out).permute(order);
  }
  }
  throw Error(key + ": not an operator brisk runs");
}

}  // namespace brisk
