// The op table of ops_cpu::fused_pointwise and its key parsing (pointwise_ops.h), and
// pointwiseNodeProblem (fused_pointwise.h), which the graph pass asks per node.
#include "ops_cpu/fused/pointwise_ops.h"

#include <map>

#include "core/graph/graph.h"
#include "ops_cpu/fused/fused_pointwise.h"

namespace brisk::ops_cpu {
namespace pointwise {
namespace {

using pw::Op;

// Key (without "aten::" and without the in-place '_') -> how it is computed.
const std::map<std::string, OpInfo>& opTable() {
  static const auto* table = new std::map<std::string, OpInfo>{
      {"add.Tensor", {Form::kArithAlpha, Op::kAdd, 3}},   {"add.Scalar", {Form::kArithAlpha, Op::kAdd, 3}},
      {"sub.Tensor", {Form::kArithAlpha, Op::kSub, 3}},   {"sub.Scalar", {Form::kArithAlpha, Op::kSub, 3}},
      {"rsub.Tensor", {Form::kRsubAlpha, Op::kSub, 3}},   {"rsub.Scalar", {Form::kRsubAlpha, Op::kSub, 3}},
      {"mul.Tensor", {Form::kBinary, Op::kMul, 2}},       {"mul.Scalar", {Form::kBinary, Op::kMul, 2}},
      {"div.Tensor", {Form::kBinary, Op::kDiv, 2}},       {"div.Scalar", {Form::kBinary, Op::kDiv, 2}},
      {"eq.Tensor", {Form::kCompare, Op::kEq, 2}},        {"eq.Scalar", {Form::kCompare, Op::kEq, 2}},
      {"ne.Tensor", {Form::kCompare, Op::kNe, 2}},        {"ne.Scalar", {Form::kCompare, Op::kNe, 2}},
      {"lt.Tensor", {Form::kCompare, Op::kLt, 2}},        {"lt.Scalar", {Form::kCompare, Op::kLt, 2}},
      {"le.Tensor", {Form::kCompare, Op::kLe, 2}},        {"le.Scalar", {Form::kCompare, Op::kLe, 2}},
      {"gt.Tensor", {Form::kCompare, Op::kGt, 2}},        {"gt.Scalar", {Form::kCompare, Op::kGt, 2}},
      {"ge.Tensor", {Form::kCompare, Op::kGe, 2}},        {"ge.Scalar", {Form::kCompare, Op::kGe, 2}},
      {"where.self", {Form::kWhere, Op::kWhere, 3}},      {"where.ScalarOther", {Form::kWhere, Op::kWhere, 3}},
      {"where.ScalarSelf", {Form::kWhere, Op::kWhere, 3}},
      {"neg", {Form::kUnary, Op::kNeg, 1}},               {"abs", {Form::kUnary, Op::kAbs, 1}},
      {"reciprocal", {Form::kUnary, Op::kReciprocal, 1}}, {"sqrt", {Form::kUnary, Op::kSqrt, 1}},
      {"rsqrt", {Form::kUnary, Op::kRsqrt, 1}},           {"log", {Form::kUnary, Op::kLog, 1}},
      {"erf", {Form::kUnary, Op::kErf, 1}},               {"pow.Tensor_Scalar", {Form::kPowScalar, Op::kMul, 2}},
      {"relu", {Form::kUnary, Op::kRelu, 1}},             {"exp", {Form::kUnary, Op::kExp, 1}},
      {"tanh", {Form::kUnary, Op::kTanh, 1}},             {"sigmoid", {Form::kUnary, Op::kSigmoid, 1}},
      {"silu", {Form::kUnary, Op::kSilu, 1}},             {"hardswish", {Form::kUnary, Op::kHardswish, 1}},
      {"hardsigmoid", {Form::kUnary, Op::kHardsigmoid, 1}},
      {"clamp", {Form::kClamp, Op::kMax, 3}},             {"hardtanh", {Form::kClamp, Op::kMax, 3}},
      {"clamp_min", {Form::kClampMin, Op::kMax, 2}},      {"clamp_max", {Form::kClampMax, Op::kMin, 2}},
      {"relu6", {Form::kRelu6, Op::kMax, 1}},             {"leaky_relu", {Form::kLeakyRelu, Op::kLeakyRelu, 2}},
      {"gelu", {Form::kGelu, Op::kGeluTanh, 2}},
  };
  return *table;
}

}  // namespace

// "aten::add_.Tensor" -> add.Tensor, in place.
ParsedKey parseKey(const std::string& key) {
  ParsedKey p;
  if (key.rfind("aten::", 0) != 0) return p;
  std::string name = key.substr(6), overload;
  if (auto dot = name.find('.'); dot != std::string::npos) {
    overload = name.substr(dot);
    name = name.substr(0, dot);
  }
  if (!name.empty() && name.back() == '_') {
    name.pop_back();
    p.inplace = true;
  }
  auto it = opTable().find(name + overload);
  if (it != opTable().end()) p.info = &it->second;
  return p;
}


}  // namespace pointwise

std::string pointwiseNodeProblem(const Node& n) {
  const pointwise::ParsedKey pk = pointwise::parseKey(n.key());
  if (!pk.info) return "not an elementwise op the interpreter has";
  if (n.inputs().size() != pk.info->inputs || n.outputs().size() != 1) return "unexpected arity";
  if (!n.blocks().empty()) return "has blocks";
  return "";
}

}  // namespace brisk::ops_cpu
