#include "delegates/onednn/quantized_chain.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <sstream>

#include "core/graph/graph.h"
#include "core/kernels/delegate.h"

namespace brisk::onednn {
namespace {

constexpr const char* kDequantize = "quantized_decomposed::dequantize_per_tensor";
constexpr const char* kQuantize = "quantized_decomposed::quantize_per_tensor";
constexpr const char* kDequantizeChannel = "quantized_decomposed::dequantize_per_channel";

bool constInt(const Value* v, int64_t want) { return v->isConstant() && v->constant().isInt() && v->constant().toInt() == want; }

// (input, scale, zero_point, quant_min, quant_max, dtype[, out_dtype]): uint8 over its
// whole range, with constant parameters.
bool uint8PerTensor(const Node& n, const char* key, size_t arity, QuantParams* p) {
  const auto& in = n.inputs();
  if (n.key() != key || in.size() != arity || !in[1]->isConstant() || !in[1]->constant().isDouble() ||
      !in[2]->isConstant() || !in[2]->constant().isInt() || !constInt(in[3], 0) || !constInt(in[4], 255) ||
      !constInt(in[5], static_cast<int64_t>(at::kByte)))
    return false;
  const double scale = in[1]->constant().toDouble();
  const int64_t zp = in[2]->constant().toInt();
  if (!(scale > 0) || zp < 0 || zp > 255) return false;
  if (p) *p = QuantParams{scale, zp};
  return true;
}

// The int8 weight and per-output-channel scales behind the anchor's float weight, when
// it was folded from a symmetric dequantize_per_channel over axis 0 (Graph::FoldedFrom).
bool int8Weight(const Node& anchor, QuantizedChain& c) {
  const Value* w = anchor.input(1);
  const Graph::FoldedFrom* from = anchor.owningBlock()->graph()->foldedFrom(w);
  if (!from || from->op != kDequantizeChannel || from->args.size() != 8) return false;
  const auto& a = from->args;  // input, scales, zero_points, axis, quant_min, quant_max, dtype, out_dtype
  if (!a[0].isTensor() || !a[1].isTensor() || !a[3].isInt() || a[3].toInt() != 0 || !a[4].isInt() ||
      a[4].toInt() != -128 || !a[5].isInt() || a[5].toInt() != 127 || !(a[7].isNone() || a[7].toScalarType() == at::kFloat))
    return false;
  const at::Tensor& q = a[0].toTensor();
  const at::Tensor& s = a[1].toTensor();
  if (q.scalar_type() != at::kChar || q.layout() != at::kStrided || s.dim() != 1 || s.size(0) != q.size(0) ||
      !s.is_floating_point())
    return false;
  if (!a[2].isNone()) {
    const at::Tensor& zp = a[2].toTensor();
    if (zp.numel() != s.numel() || zp.ne(0).any().item<bool>()) return false;  // oneDNN's s8 weights have none
  }
  c.float_weight = w;
  c.folded = from;
  c.weight = q.contiguous();
  c.weight_scales = s.to(at::kFloat).contiguous();
  return true;
}

const Node* producerIn(const Value* v, const std::unordered_set<const Node*>& group) {
  const Node* p = v->producer();
  return p && group.count(p) ? p : nullptr;
}

}  // namespace

bool isUint8Dequantize(const Node& n, QuantParams* p) {
  if (!uint8PerTensor(n, kDequantize, 7, p)) return false;
  const Value* out_dtype = n.input(6);
  return out_dtype->isConstant() &&
         (out_dtype->constant().isNone() || out_dtype->constant().toScalarType() == at::kFloat);
}

bool isUint8Quantize(const Node& n, QuantParams* p) { return uint8PerTensor(n, kQuantize, 6, p); }

std::string QuantizedChain::str() const {
  std::string s = "int8 " + body.str();
  if (q) s += " -> uint8";
  return s;
}

std::optional<QuantizedChain> parseQuantizedChain(const std::vector<const Node*>& nodes, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<QuantizedChain> {
    if (why) *why = w;
    return std::nullopt;
  };
  const std::unordered_set<const Node*> group(nodes.begin(), nodes.end());
  const auto anchor = std::find_if(nodes.begin(), nodes.end(), [](const Node* n) { return anchorKind(*n).has_value(); });
  if (anchor == nodes.end()) return fail("no conv or linear with a constant weight");
  QuantizedChain c;
  c.nodes = nodes;
  c.dq_x = producerIn((*anchor)->input(0), group);
  if (!c.dq_x || !isUint8Dequantize(*c.dq_x, &c.x) || c.dq_x->output(0)->soleUser() != *anchor)
    return fail("the source is not a uint8 dequantize only the anchor reads");
  if (!int8Weight(**anchor, c))
    return fail("the weight is not a folded symmetric per-channel int8 dequantize");
  // The float ops after the anchor, up to the closing quantize, in dataflow order.
  std::vector<const Node*> body{*anchor};
  for (const Node* cur = *anchor;;) {
    const Node* next = cur->output(0)->soleUser();
    if (!next || !group.count(next)) break;
    if (isUint8Quantize(*next, &c.y)) {
      c.q = next;
      break;
    }
    body.push_back(next);
    cur = next;
  }
  std::optional<FusionChain> f = parseChain(body, why);
  if (!f) return std::nullopt;
  if (f->bn || f->dw) return fail("a batch norm or depthwise step in a quantized chain");
  if (f->anchor == Anchor::kLinear && ((*anchor)->key() != "aten::linear" || f->add))
    return fail("a quantized linear layer is aten::linear with at most an activation");
  if (f->add) {
    c.dq_other = producerIn(f->add->input(f->add_other), group);
    if (!c.dq_other || !isUint8Dequantize(*c.dq_other, &c.other) || c.dq_other->output(0)->soleUser() != f->add)
      return fail("the residual operand is not a uint8 dequantize only the add reads");
  }
  c.body = std::move(*f);
  const size_t expected = c.body.nodes.size() + 1 + (c.dq_other ? 1 : 0) + (c.q ? 1 : 0);
  if (expected != nodes.size()) return fail("nodes outside the chain");
  return c;
}

std::optional<QuantizedChain> growQuantizedChain(const Node& anchor, const std::unordered_set<const Node*>& taken) {
  if (!anchorKind(anchor)) return std::nullopt;
  const Node* dq_x = anchor.input(0)->producer();
  if (!dq_x || taken.count(dq_x) || dq_x->owningBlock() != anchor.owningBlock()) return std::nullopt;
  std::optional<FusionChain> f = growChain(anchor, taken);
  if (!f) return std::nullopt;
  std::vector<const Node*> body = f->nodes;
  // Cut what a quantized chain cannot take: a batch norm or depthwise step, a residual
  // add whose operand is no free uint8 dequantize, a linear layer's add.
  for (size_t i = 1; i < body.size(); ++i) {
    const Node* n = body[i];
    bool keep = n != f->bn && n != f->dw && n != f->dw_bn;
    if (keep && n == f->add) {
      const Node* dq = n->input(f->add_other)->producer();
      keep = f->anchor == Anchor::kConv && dq && !taken.count(dq) && dq->owningBlock() == anchor.owningBlock() &&
             isUint8Dequantize(*dq) && dq->output(0)->soleUser() == n;
    }
    if (!keep) {
      body.resize(i);
      break;
    }
  }
  std::vector<const Node*> nodes{dq_x};
  if (f->add && std::find(body.begin(), body.end(), f->add) != body.end())
    nodes.push_back(f->add->input(f->add_other)->producer());
  nodes.insert(nodes.end(), body.begin(), body.end());
  if (const Node* q = body.back()->output(0)->soleUser();
      q && !taken.count(q) && q->owningBlock() == anchor.owningBlock() && isUint8Quantize(*q))
    nodes.push_back(q);
  return parseQuantizedChain(nodes);
}

std::optional<QuantizedMaxPool> parseQuantizedMaxPool(const std::vector<const Node*>& nodes) {
  if (nodes.size() != 3) return std::nullopt;
  const std::unordered_set<const Node*> group(nodes.begin(), nodes.end());
  const auto pool = std::find_if(nodes.begin(), nodes.end(), [](const Node* n) { return n->key() == "aten::max_pool2d"; });
  if (pool == nodes.end() || (*pool)->inputs().size() != 6) return std::nullopt;
  QuantizedMaxPool p;
  p.nodes = nodes;
  p.pool = *pool;
  p.dq = producerIn(p.pool->input(0), group);
  const Node* q = p.pool->output(0)->soleUser();
  QuantParams in, out;
  if (!p.dq || !isUint8Dequantize(*p.dq, &in) || p.dq->output(0)->soleUser() != p.pool || !q || !group.count(q) ||
      !isUint8Quantize(*q, &out) || in.scale != out.scale || in.zero_point != out.zero_point)
    return std::nullopt;
  // kernel_size, stride ([] means the kernel's), padding, dilation: int[1] means both dims.
  std::vector<int64_t>* lists[] = {&p.kernel, &p.stride, &p.padding, &p.dilation};
  for (size_t i = 0; i < 4; ++i) {
    const Value* v = p.pool->input(1 + i);
    if (!v->isConstant() || !v->constant().isIntList()) return std::nullopt;
    *lists[i] = v->constant().toIntVector();
    if (lists[i]->size() == 1) lists[i]->push_back(lists[i]->front());
  }
  if (p.stride.empty()) p.stride = p.kernel;
  if (p.kernel.size() != 2 || p.stride.size() != 2 || p.padding.size() != 2 || p.dilation.size() != 2) return std::nullopt;
  const Value* ceil = p.pool->input(5);
  if (!ceil->isConstant() || !ceil->constant().isBool()) return std::nullopt;
  p.ceil_mode = ceil->constant().toBool();
  for (size_t d = 0; d < 2; ++d)
    if (p.kernel[d] < 1 || p.stride[d] < 1 || p.dilation[d] < 1 || p.padding[d] < 0 || 2 * p.padding[d] > p.kernel[d])
      return std::nullopt;  // ATen's own checks reject these: the nested block says so
  return p;
}

std::optional<QuantizedMaxPool> growQuantizedMaxPool(const Node& pool, const std::unordered_set<const Node*>& taken) {
  if (pool.key() != "aten::max_pool2d" || pool.inputs().empty()) return std::nullopt;
  const Node* dq = pool.input(0)->producer();
  const Node* q = pool.output(0)->soleUser();
  if (!dq || !q || taken.count(dq) || taken.count(q) || dq->owningBlock() != pool.owningBlock() ||
      q->owningBlock() != pool.owningBlock())
    return std::nullopt;
  return parseQuantizedMaxPool({dq, &pool, q});
}

bool isQuantizedPartition(const Node& n) {
  if (n.kind() != kDelegateKind) return false;
  auto it = n.attributes().find(kDelegateBackendAttr);
  if (it == n.attributes().end() || it->second.toStringRef() != "onednn") return false;
  const auto& nodes = n.block(0)->nodes();
  return !nodes.empty() && isUint8Dequantize(*nodes.front());
}

}  // namespace brisk::onednn
