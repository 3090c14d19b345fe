#include "delegates/onednn/fusion_chain.h"

#include <sstream>

#include "core/graph/graph.h"

namespace brisk::onednn {
namespace {

bool isConstTensor(const Value* v, int64_t dim) {
  if (!v->isConstant() || !v->constant().isTensor()) return false;
  const at::Tensor& t = v->constant().toTensor();
  return t.scalar_type() == at::kFloat && t.dim() == dim && t.layout() == at::kStrided;
}
bool isNoneOr1d(const Value* v) {
  return v->isConstant() && (v->constant().isNone() || isConstTensor(v, 1));
}
bool isOne(const Value* v) { return constantNumber(v) == 1.0; }
bool constIntList(const Value* v) { return v->isConstant() && v->constant().isIntList(); }
bool constBool(const Value* v, bool want) {
  return v->isConstant() && v->constant().isBool() && v->constant().toBool() == want;
}

bool isConvAnchor(const Node& n) {
  const auto& in = n.inputs();
  const std::string& k = n.key();
  size_t groups_at;
  if (k == "aten::conv2d" && in.size() == 7) {
    groups_at = 6;
  } else if ((k == "aten::convolution" && in.size() == 9) || (k == "aten::_convolution" && in.size() == 13)) {
    if (!constBool(in[6], false)) return false;  // transposed
    groups_at = 8;
  } else {
    return false;
  }
  if (!isConstTensor(in[1], 4) || !isNoneOr1d(in[2])) return false;
  for (size_t i = 3; i < 6; ++i)
    if (!constIntList(in[i])) return false;
  return in[groups_at]->isConstant() && in[groups_at]->constant().isInt();
}

// A conv anchor's int[2] argument i ([k] means [k, k]).
std::vector<int64_t> pairArg(const Node& n, size_t i) {
  std::vector<int64_t> l = n.input(i)->constant().toIntVector();
  if (l.size() == 1) l.push_back(l[0]);
  return l;
}
int64_t groupsOf(const Node& n) { return n.input(n.key() == "aten::conv2d" ? 6 : 8)->constant().toInt(); }

bool isLinearAnchor(const Node& n) {
  const auto& in = n.inputs();
  const std::string& k = n.key();
  if (k == "aten::linear" && in.size() == 3) return isConstTensor(in[1], 2) && isNoneOr1d(in[2]);
  if (k == "aten::addmm" && in.size() == 5)
    return isConstTensor(in[0], 1) && isConstTensor(in[2], 2) && !in[1]->isConstant() && isOne(in[3]) && isOne(in[4]);
  if ((k == "aten::mm" || k == "aten::matmul") && in.size() == 2)
    return !in[0]->isConstant() && isConstTensor(in[1], 2);
  return false;
}

}  // namespace

bool fusesDepthwise(const Node& anchor, const Node& dw) {
  if (!isConvAnchor(anchor) || !isConvAnchor(dw)) return false;
  const at::Tensor& w1 = anchor.input(1)->constant().toTensor();
  const at::Tensor& w2 = dw.input(1)->constant().toTensor();
  const std::vector<int64_t> one{1, 1}, zero{0, 0};
  if (w1.size(2) != 1 || w1.size(3) != 1 || groupsOf(anchor) != 1 || pairArg(anchor, 3) != one ||
      pairArg(anchor, 4) != zero || pairArg(anchor, 5) != one)
    return false;
  const int64_t c = w1.size(0);
  return w2.size(0) == c && w2.size(1) == 1 && w2.size(2) == 3 && w2.size(3) == 3 && groupsOf(dw) == c &&
         pairArg(dw, 3) == one && pairArg(dw, 4) == one && pairArg(dw, 5) == one;
}

std::string Unary::str() const {
  std::ostringstream os;
  os << attr;
  if (!scalars.empty()) {
    os << "(";
    for (size_t i = 0; i < scalars.size(); ++i) os << (i ? "," : "") << scalars[i];
    os << ")";
  }
  if (algorithm && *algorithm != "none") os << "[" << *algorithm << "]";
  return os.str();
}

std::string FusionChain::str() const {
  std::string s = anchor == Anchor::kConv ? "conv" : "linear";
  if (bn) s += " + batch_norm (folded)";
  if (add) s += " + add";
  if (unary.attr != "none") s += " + " + unary.str();
  if (dw) {
    s += " + depthwise conv";
    if (dw_bn) s += " + batch_norm (folded)";
    if (dw_unary.attr != "none") s += " + " + dw_unary.str();
  }
  return s;
}

std::optional<Anchor> anchorKind(const Node& n) {
  if (isConvAnchor(n)) return Anchor::kConv;
  if (isLinearAnchor(n)) return Anchor::kLinear;
  return std::nullopt;
}

// The out-of-place key of an in-place op ("aten::relu_" -> "aten::relu",
// "aten::add_.Tensor" -> "aten::add.Tensor"); other keys as they are. torch.export's
// aten IR keeps the in-place activations and residual adds of eager code (ReLU(inplace=
// True), `out += identity`). In a chain the op mutates the value before it, which only
// that op reads, so it computes what the out-of-place op would.
std::string outOfPlaceKey(const std::string& key) {
  const size_t dot = std::min(key.find('.'), key.size());
  if (dot > 6 && key[dot - 1] == '_' && key[dot - 2] != '_') return key.substr(0, dot - 1) + key.substr(dot);
  return key;
}

std::optional<Unary> unaryOf(const Node& n) {
  const std::string k = outOfPlaceKey(n.key());
  const auto& in = n.inputs();
  static const std::pair<const char*, const char*> kPlain[] = {
      {"aten::relu", "relu"},           {"aten::sigmoid", "sigmoid"}, {"aten::tanh", "tanh"},
      {"aten::hardswish", "hardswish"}, {"aten::silu", "swish"},      {"aten::hardsigmoid", "hardsigmoid"}};
  for (const auto& [key, attr] : kPlain)
    if (k == key && in.size() == 1) return Unary{attr, {}, std::nullopt};
  if (k == "aten::relu6" && in.size() == 1) return Unary{"hardtanh", {0.0, 6.0}, std::nullopt};
  if (k == "aten::hardtanh" && in.size() == 3) {
    auto lo = constantNumber(in[1]), hi = constantNumber(in[2]);
    if (lo && hi) return Unary{"hardtanh", {*lo, *hi}, std::nullopt};
  }
  if (k == "aten::leaky_relu" && in.size() == 2)
    if (auto slope = constantNumber(in[1])) return Unary{"leaky_relu", {*slope}, std::nullopt};
  if (k == "aten::gelu" && in.size() == 2 && in[1]->isConstant() && in[1]->constant().isString()) {
    const std::string& approx = in[1]->constant().toStringRef();
    if (approx == "none" || approx == "tanh") return Unary{"gelu", {}, approx};
  }
  return std::nullopt;
}

bool isBatchNorm(const Node& n) {
  const auto& in = n.inputs();
  size_t eps_at;
  if (n.key() == "aten::batch_norm" && in.size() == 9) {
    if (!constBool(in[5], false)) return false;  // training
    eps_at = 7;
  } else if (n.key() == "aten::_native_batch_norm_legit_no_training" && in.size() == 7) {
    eps_at = 6;
  } else {
    return false;
  }
  return isNoneOr1d(in[1]) && isNoneOr1d(in[2]) && isConstTensor(in[3], 1) && isConstTensor(in[4], 1) &&
         constantNumber(in[eps_at]).has_value();
}

bool isAdd(const Node& n) {
  return outOfPlaceKey(n.key()) == "aten::add.Tensor" && n.inputs().size() == 3 && isOne(n.input(2));
}

std::optional<FusionChain> parseChain(const std::vector<const Node*>& nodes, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<FusionChain> {
    if (why) *why = w;
    return std::nullopt;
  };
  if (nodes.empty()) return fail("no nodes");
  std::optional<Anchor> kind = anchorKind(*nodes[0]);
  if (!kind) return fail(nodes[0]->describe() + " is not a conv or linear with constant weights");
  FusionChain c{*kind, nodes};
  const Value* cur = nodes[0]->output(0);
  bool after_add = false;
  for (size_t i = 1; i < nodes.size(); ++i) {
    const Node& n = *nodes[i];
    const bool unary_done = c.unary.attr != "none";
    if (c.dw) {  // after the fused depthwise conv: its batch norm, then its activation
      const bool dw_unary_done = c.dw_unary.attr != "none";
      if (!c.dw_bn && !dw_unary_done && isBatchNorm(n) && n.input(0) == cur) {
        c.dw_bn = &n;
      } else if (auto u = unaryOf(n); u && !dw_unary_done && n.input(0) == cur) {
        c.dw_unary = *u;
      } else {
        return fail(n.describe() + " does not continue the chain");
      }
      cur = n.output(0);
      continue;
    }
    if (c.anchor == Anchor::kConv && !c.add && n.input(0) == cur && fusesDepthwise(*nodes[0], n)) {
      c.dw = &n;
    } else if (c.anchor == Anchor::kConv && !c.bn && !c.add && !unary_done && isBatchNorm(n) && n.input(0) == cur) {
      c.bn = &n;
    } else if (!c.add && !unary_done && isAdd(n) && (n.input(0) == cur) != (n.input(1) == cur) &&
               !n.input(n.input(0) == cur ? 1 : 0)->isConstant() && (n.key() == "aten::add.Tensor" || n.input(0) == cur)) {
      // (An in-place add joins only when it writes the chain's value, not the other operand.)
      c.add = &n;
      c.add_other = n.input(0) == cur ? 1 : 0;
      after_add = true;
    } else if (auto u = unaryOf(n); u && !unary_done && n.input(0) == cur) {
      // After an add oneDNN's fused ops take relu only; a linear's add takes none.
      if (after_add && (c.anchor == Anchor::kLinear || u->attr != "relu"))
        return fail(n.describe() + ": this activation cannot follow the add");
      c.unary = *u;
    } else {
      return fail(n.describe() + " does not continue the chain");
    }
    cur = n.output(0);
  }
  return c;
}

std::optional<FusionChain> growChain(const Node& anchor,
                                     const std::unordered_set<const Node*>& taken) {
  std::vector<const Node*> nodes{&anchor};
  if (!parseChain(nodes)) return std::nullopt;
  const Block& block = *anchor.owningBlock();
  for (const Node* cur = &anchor;;) {
    // Batch norm's other results (saved statistics) must be unread.
    for (size_t i = 1; i < cur->outputs().size(); ++i)
      if (cur->output(i)->hasUses()) return parseChain({nodes.begin(), nodes.end() - 1});
    const Node* next = cur->output(0)->soleUser();
    if (!next || next->owningBlock() != &block || taken.count(next)) break;
    nodes.push_back(next);
    if (!parseChain(nodes)) {
      nodes.pop_back();
      break;
    }
    cur = next;
  }
  return parseChain(nodes);
}

}  // namespace brisk::onednn
