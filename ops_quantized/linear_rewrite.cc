#include "ops_quantized/linear_rewrite.h"

#include <ATen/core/function_schema.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "core/common/options.h"
#include "core/graph/graph.h"
#include "ops_quantized/precision.h"
#include "ops_quantized/rnn_int8.h"

namespace brisk::ops_quantized {
namespace {

bool isFp32Matrix(const Value* v) {
  if (!v->isConstant() || !v->constant().isTensor()) return false;
  const at::Tensor& t = v->constant().toTensor();
  return t.scalar_type() == at::kFloat && t.dim() == 2 && t.layout() == at::kStrided && t.device().is_cpu() &&
         t.numel() > 0;
}

// None, or a constant fp32 vector of `n` elements.
bool isBias(const Value* v, int64_t n) {
  if (!v->isConstant()) return false;
  const c10::IValue& c = v->constant();
  if (c.isNone()) return true;
  if (!c.isTensor()) return false;
  const at::Tensor& t = c.toTensor();
  return t.scalar_type() == at::kFloat && t.dim() == 1 && t.size(0) == n && t.device().is_cpu();
}

struct LinearParts {
  Value* x;
  Value* w;  // [N, K]
  Value* b;  // None or [N]; null: a None to add
};

// The operands of a linear layer with a constant fp32 weight, in any of its spellings.
std::optional<LinearParts> matchLinear(Graph& g, Node& n) {
  const std::string& key = n.key();
  if (key == "aten::linear" && n.inputs().size() == 3) {
    if (!isFp32Matrix(n.input(1))) return std::nullopt;
    if (!isBias(n.input(2), n.input(1)->constant().toTensor().size(0))) return std::nullopt;
    return LinearParts{n.input(0), n.input(1), n.input(2)};
  }
  const bool addmm = key == "aten::addmm" && n.inputs().size() == 5;
  const bool mm = key == "aten::mm" && n.inputs().size() == 2;
  if (!addmm && !mm) return std::nullopt;
  Value* mat2 = n.input(addmm ? 2 : 1);
  if (!isFp32Matrix(mat2)) return std::nullopt;
  const int64_t out_features = mat2->constant().toTensor().size(1);
  if (addmm && (constantNumber(n.input(3)) != 1.0 || constantNumber(n.input(4)) != 1.0 ||
                !isBias(n.input(0), out_features) || n.input(0)->constant().isNone()))
    return std::nullopt;
  // The core IR holds W^T (a folded permute of W): the node takes W itself.
  Value* w = g.addConstant(c10::IValue(mat2->constant().toTensor().t()), mat2->type());
  return LinearParts{n.input(addmm ? 1 : 0), w, addmm ? n.input(0) : nullptr};
}

// The aten::relu (or relu_) of `block` that is the only reader of `v`, or null.
Node* onlyReluOf(const Value* v, const Block& block) {
  if (v->uses().size() != 1) return nullptr;
  Node* r = v->uses().front().user;
  if (!r || r->owningBlock() != &block || r->inputs().size() != 1 || r->input(0) != v) return nullptr;
  return r->key() == "aten::relu" || r->key() == "aten::relu_" ? r : nullptr;
}

size_t rewriteBlock(Graph& g, Block& block, const std::vector<Mode>& modes) {
  size_t changed = 0;
  const std::vector<Node*> nodes = block.nodes();
  std::vector<Node*> erased;
  for (Node* n : nodes) {
    if (std::find(erased.begin(), erased.end(), n) != erased.end()) continue;
    std::optional<LinearParts> p = matchLinear(g, *n);
    if (!p) continue;
    // Both modes run every linear layer: the first requested one takes it.
    const bool int8 = modes.front() == Mode::kInt8Dynamic;
    Node* relu = int8 ? onlyReluOf(n->output(0), block) : nullptr;
    const char* kind = !int8 ? kLinearFp16Kind : relu ? kLinearInt8ReluKind : kLinearInt8Kind;
    const Value* result = relu ? relu->output(0) : n->output(0);
    NodeSpec spec;
    spec.kind = kind;
    spec.schema = quantizedLinearSchema(kind);
    spec.inputs = {p->x, p->w, p->b ? p->b : g.addConstant(c10::IValue(), c10::NoneType::get())};
    spec.outputs.emplace_back(result->type(), result->name());
    Node* q = block.insertNodeBefore(n, std::move(spec));
    if (relu) {
      g.replaceAllUses(relu->output(0), q->output(0));
      block.eraseNode(relu);
      erased.push_back(relu);
    }
    g.replaceAllUses(n->output(0), q->output(0));
    block.eraseNode(n);
    ++changed;
  }
  return changed;
}

}  // namespace

size_t reducePrecision(Graph& graph, const PassContext& ctx, std::vector<Mode> modes) {
  // The rewritten nodes exist only for this plugin's kernels: fp16's is an out-variant
  // kernel, int8's a native one. A Module that runs every node through the TorchScript
  // operator (fallback_only), or has turned that kernel kind off, keeps the fp32 layers.
  const Options& o = ctx.options;
  // Recurrent layers: only int8_dynamic runs them (an out-variant kernel), so it takes
  // them wherever it is listed.
  const bool int8_rnns = !o.fallback_only && o.use_out_variants &&
                         std::find(modes.begin(), modes.end(), Mode::kInt8Dynamic) != modes.end();
  modes.erase(std::remove_if(modes.begin(), modes.end(),
                             [&](Mode m) {
                               if (m == Mode::kBf16) return false;  // not this plugin's kernels
                               return o.fallback_only ||
                                      (m == Mode::kFp16Weights ? !o.use_out_variants : !o.use_native);
                             }),
              modes.end());
  // bf16 runs in the onednn delegate. Listed before the linear modes it takes the
  // linear layers there, in bf16; listed after them, it leaves them to this plugin.
  const bool linears = !modes.empty() && modes.front() != Mode::kBf16;
  modes.erase(std::remove(modes.begin(), modes.end(), Mode::kBf16), modes.end());
  size_t changed = 0;
  for (Block* b : graph.allBlocks()) {
    if (int8_rnns) changed += rewriteRnnsInt8(graph, *b);
    if (linears) changed += rewriteBlock(graph, *b, modes);
  }
  return changed;
}

const c10::FunctionSchema* quantizedLinearSchema(const char* kind) {
  static std::mutex mu;
  // Never destroyed: nodes of any Module may point at them until the process ends.
  static auto* schemas = new std::map<std::string, std::unique_ptr<c10::FunctionSchema>>();
  std::lock_guard<std::mutex> lock(mu);
  auto& s = (*schemas)[kind];
  if (!s) {
    std::vector<c10::Argument> args = {
        c10::Argument("input", c10::TensorType::get()), c10::Argument("weight", c10::TensorType::get()),
        c10::Argument("bias", c10::OptionalType::create(c10::TensorType::get()))};
    std::vector<c10::Argument> rets = {c10::Argument("", c10::TensorType::get())};
    s = std::make_unique<c10::FunctionSchema>(kind, "", std::move(args), std::move(rets));
  }
  return s.get();
}

}  // namespace brisk::ops_quantized
