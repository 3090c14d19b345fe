// ops_cpu.decompose_encoder_layer (encoder_layer_decompose.h).
#include "ops_cpu/fused/encoder_layer_decompose.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/graph/graph.h"
#include "ops_cpu/fused/rnn_match.h"

namespace brisk::ops_cpu {
namespace {

using rnn::constInt;
using rnn::constTensor;

constexpr const char* kOp = "aten::_transformer_encoder_layer_fwd";

// Inputs of _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight,
// qkv_bias, proj_weight, proj_bias, use_gelu, norm_first, eps, norm_weight_1,
// norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2,
// ffn_bias_2, mask, mask_type).
enum Input : size_t {
  kSrc = 0, kEmbedDim, kNumHeads, kQkvW, kQkvB, kProjW, kProjB, kUseGelu, kNormFirst, kEps,
  kNorm1W, kNorm1B, kNorm2W, kNorm2B, kFfn1W, kFfn1B, kFfn2W, kFfn2B, kMask, kMaskType, kNumInputs
};

struct Layer {
  Node* node;
  int64_t embed, heads;
  bool gelu, norm_first;
};

std::optional<bool> constBool(const Value* v) {
  if (!v->isConstant() || !v->constant().isBool()) return std::nullopt;
  return v->constant().toBool();
}

// A constant dense fp32 CPU tensor of exactly `shape`.
bool isWeight(const Value* v, std::initializer_list<int64_t> shape) {
  const at::Tensor t = constTensor(v);
  return t.defined() && t.layout() == at::kStrided && t.device().is_cpu() && t.scalar_type() == at::kFloat &&
         t.sizes() == at::IntArrayRef(shape);
}

std::optional<Layer> match(Node* n) {
  if (!rnn::is(n, kOp, kNumInputs) || n->outputs().size() != 1) return std::nullopt;
  const auto e = constInt(n->input(kEmbedDim)), h = constInt(n->input(kNumHeads));
  const auto gelu = constBool(n->input(kUseGelu)), norm_first = constBool(n->input(kNormFirst));
  if (!e || !h || *e < 1 || *h < 1 || *e % *h != 0 || !gelu || !norm_first || !constantNumber(n->input(kEps)))
    return std::nullopt;
  // A constant mask (None aside) stays on the fused kernel.
  const Value* mask = n->input(kMask);
  if (mask->isConstant() && !mask->constant().isNone()) return std::nullopt;
  // The feed-forward width is ffn_weight_1's rows; every other shape follows from E.
  const at::Tensor ffn1 = constTensor(n->input(kFfn1W));
  if (!ffn1.defined() || ffn1.dim() != 2) return std::nullopt;
  const int64_t f = ffn1.size(0);
  const bool shapes = isWeight(n->input(kQkvW), {3 * *e, *e}) && isWeight(n->input(kQkvB), {3 * *e}) &&
                      isWeight(n->input(kProjW), {*e, *e}) && isWeight(n->input(kProjB), {*e}) &&
                      isWeight(n->input(kNorm1W), {*e}) && isWeight(n->input(kNorm1B), {*e}) &&
                      isWeight(n->input(kNorm2W), {*e}) && isWeight(n->input(kNorm2B), {*e}) &&
                      isWeight(n->input(kFfn1W), {f, *e}) && isWeight(n->input(kFfn1B), {f}) &&
                      isWeight(n->input(kFfn2W), {*e, f}) && isWeight(n->input(kFfn2B), {*e});
  if (!shapes) return std::nullopt;
  return Layer{n, *e, *h, *gelu, *norm_first};
}

// The JIT's schema of an operator: kernels, escape analysis and the memory planner read
// the nodes' schemas (a view's alias annotations).
const c10::FunctionSchema* schemaOf(const char* name, const char* overload) {
  const std::shared_ptr<torch::jit::Operator> op = torch::jit::findOperatorFor(c10::OperatorName(name, overload));
  if (!op) throw Error(std::string("no operator ") + name + (*overload ? "." : "") + overload);
  return &op->schema();
}

// Adds nodes to `block`: before `before`, or at its end when `before` is null.
class Emitter {
 public:
  Emitter(Graph& g, Block* block, Node* before = nullptr) : g_(g), block_(block), before_(before) {}

  Node* node(const char* kind, const char* overload, std::vector<Value*> inputs, c10::TypePtr out) {
    NodeSpec spec;
    spec.kind = kind;
    spec.overload = overload;
    spec.schema = schemaOf(kind, overload);
    spec.inputs = std::move(inputs);
    spec.outputs.push_back({std::move(out), ""});
    return before_ ? block_->insertNodeBefore(before_, std::move(spec)) : block_->appendNode(std::move(spec));
  }
  Value* tensor(const char* kind, const char* overload, std::vector<Value*> inputs) {
    return node(kind, overload, std::move(inputs), c10::TensorType::get())->output(0);
  }
  Value* boolean(const char* kind, const char* overload, std::vector<Value*> inputs) {
    return node(kind, overload, std::move(inputs), c10::BoolType::get())->output(0);
  }
  Value* integer(int64_t v) { return g_.addConstant(c10::IValue(v), c10::IntType::get()); }
  Value* ints(std::vector<int64_t> v) { return g_.addConstant(c10::IValue(std::move(v)), c10::ListType::ofInts()); }
  Value* none() { return g_.addConstant(c10::IValue(), c10::NoneType::get()); }
  Value* flag(bool b) { return g_.addConstant(c10::IValue(b), c10::BoolType::get()); }

 private:
  Graph& g_;
  Block* block_;
  Node* before_;
};

// The decomposed layer, appended to `block`; returns its result.
Value* emitDecomposed(Graph& g, Block* block, const Layer& l) {
  Emitter e(g, block);
  const Node& n = *l.node;
  Value* src = n.input(kSrc);
  Value* eps = n.input(kEps);
  Value* normalized = e.ints({l.embed});
  auto norm = [&](Value* x, size_t w, size_t b) {
    // cudnn_enable = true, as ATen's norm() passes it (no effect on CPU).
    return e.tensor("aten::layer_norm", "", {x, normalized, n.input(w), n.input(b), eps, e.flag(true)});
  };
  auto linear = [&](Value* x, size_t w, size_t b) { return e.tensor("aten::linear", "", {x, n.input(w), n.input(b)}); };
  Value* one = e.integer(1);

  // Self-attention: heads as [3, B, H, L, D] views of the qkv projection.
  Value* x = l.norm_first ? norm(src, kNorm1W, kNorm1B) : src;
  Value* qkv = linear(x, kQkvW, kQkvB);
  Value* split = e.tensor("aten::unflatten", "int", {qkv, e.integer(-1), e.ints({3, l.heads, l.embed / l.heads})});
  Value* heads = e.tensor("aten::permute", "", {split, e.ints({2, 0, 3, 1, 4})});
  std::array<Value*, 3> qkv_heads;
  for (int64_t i = 0; i < 3; ++i) qkv_heads[i] = e.tensor("aten::select", "int", {heads, e.integer(0), e.integer(i)});
  Value* attn = e.tensor("aten::scaled_dot_product_attention", "",
                         {qkv_heads[0], qkv_heads[1], qkv_heads[2], e.none(),
                          g.addConstant(c10::IValue(0.0), c10::FloatType::get()), e.flag(false), e.none(),
                          e.flag(false)});
  Value* merged = e.tensor("aten::flatten", "using_ints",
                           {e.tensor("aten::transpose", "int", {attn, one, e.integer(2)}), e.integer(2), e.integer(3)});
  x = e.tensor("aten::add", "Tensor", {linear(merged, kProjW, kProjB), src, one});
  if (!l.norm_first) x = norm(x, kNorm1W, kNorm1B);

  // Feed-forward block.
  Value* h = linear(l.norm_first ? norm(x, kNorm2W, kNorm2B) : x, kFfn1W, kFfn1B);
  h = l.gelu ? e.tensor("aten::gelu", "", {h, g.addConstant(c10::IValue(std::string("none")), c10::StringType::get())})
             : e.tensor("aten::relu", "", {h});
  Value* out = e.tensor("aten::add", "Tensor", {linear(h, kFfn2W, kFfn2B), x, one});
  return l.norm_first ? out : norm(out, kNorm2W, kNorm2B);
}

// Whether the decomposed branch applies to this call, computed before the layer:
// mask is None (when it is not a constant None), src is not nested, src.dim() == 3.
Value* emitCondition(Graph& g, const Layer& l) {
  Emitter e(g, l.node->owningBlock(), l.node);
  Value* src = l.node->input(kSrc);
  Value* dense = e.boolean("aten::__not__", "", {e.boolean("prim::is_nested", "", {src})});
  Value* rank3 = e.boolean("aten::eq", "int",
                           {e.node("aten::dim", "", {src}, c10::IntType::get())->output(0), e.integer(3)});
  Value* ok = e.boolean("aten::__and__", "bool", {dense, rank3});
  Value* mask = l.node->input(kMask);
  if (mask->isConstant()) return ok;  // None (match() declines any other constant)
  return e.boolean("aten::__and__", "bool", {ok, e.boolean("aten::__is__", "", {mask, e.none()})});
}

void rewrite(Graph& g, const Layer& l) {
  Node* fused = l.node;
  Block* block = fused->owningBlock();
  NodeSpec branch;
  branch.kind = "prim::If";
  branch.inputs = {emitCondition(g, l)};
  branch.outputs.push_back({fused->output(0)->type(), fused->output(0)->name()});
  Node* iff = block->insertNodeBefore(fused, std::move(branch));

  Block* decomposed = iff->addBlock();
  decomposed->addReturn(emitDecomposed(g, decomposed, l));

  // The other branch: the same fused node, marked so that its kernel skips packing.
  Block* other = iff->addBlock();
  NodeSpec same;
  same.kind = fused->kind();
  same.overload = fused->schema() ? fused->schema()->overload_name() : "";
  same.schema = fused->schema();
  same.inputs = fused->inputs();
  same.outputs.push_back({fused->output(0)->type(), fused->output(0)->name()});
  same.frontend = fused->frontend();
  Node* kept = other->appendNode(std::move(same));
  for (const auto& [name, value] : fused->attributes()) kept->setAttribute(name, value);
  kept->setAttribute(kEncoderLayerMaskedBranch, c10::IValue(true));
  other->addReturn(kept->output(0));

  g.replaceAllUses(fused->output(0), iff->output(0));
  block->eraseNode(fused);
}

}  // namespace

// rnn::fuseSteps: every layer is matched before the first rewrite, so the nodes this pass
// adds are never matched again.
size_t decomposeEncoderLayers(Graph& g, const PassContext&) { return rnn::fuseSteps(g, match, rewrite); }

void registerEncoderLayerDecompose(PluginRegistrar& r) {
  // Before ops_quantized's reduce_precision (kPassOrderFuse - 50): the linear layers it
  // spells out are then rewritten to int8 / fp16 like any other when a precision is asked.
  r.pass("decompose_encoder_layer", kPassOrderFuse - 100, decomposeEncoderLayers,
         "aten::_transformer_encoder_layer_fwd with frozen weights and no mask -> linear, "
         "scaled_dot_product_attention, layer_norm, ... (so delegates claim its linear layers), behind a "
         "prim::If that keeps the fused node for calls with a mask");
}

}  // namespace brisk::ops_cpu
