// ops_cpu.fuse_lstm_cell (lstm_cell_fusion.h). The pattern, as torch.export's core ATen
// IR writes one step of nn.LSTM (the input projection of all steps computed before the
// loop; gx is this step's slice of it):
//
//   hv    = aten::view(h, [M, K])
//   gh    = aten::addmm(b_hh, hv, W_hh^T, beta=1, alpha=1)     b_hh, W_hh^T constants
//   gh3   = aten::view(gh, gates_shape)                         gates_shape[-1] = 4H
//   gates = aten::add.Tensor(gh3, gx, alpha=1)                  (either order)
//           (gx = squeeze.dims(slice.Tensor(G, 0, t, t + 1, 1), [0]) read once: the
//           fused node reads row t of G and the two views go too)
//   parts = aten::split_with_sizes(gates, [H, H, H, H], last dim)
//   gi, gf, gg, go = prim::ListUnpack(parts)
//   i = sigmoid(gi); f = sigmoid(gf); g = tanh(gg); o = sigmoid(go)
//   c' = aten::add.Tensor(mul(f, c), mul(i, g), alpha=1)        (muls and add: either order)
//   h' = aten::mul.Tensor(o, tanh(c'))
//
// Every value between hv and h' except c' must be read by the next node of the pattern
// only, and the nodes from gh3's producer on must sit in one block; otherwise the step is
// left alone (a value read elsewhere would keep the unfused nodes alive and compute the
// step twice). Multiplication and addition of two floats are commutative bit for bit, so
// the operand order of the muls and adds does not change the result.
#include "ops_cpu/fused/lstm_cell_fusion.h"

#include <ATen/ATen.h>

#include <optional>
#include <vector>

#include "core/graph/graph.h"
#include "ops_cpu/fused/lstm_step.h"

namespace brisk::ops_cpu {
namespace {

bool is(const Node* n, const char* key, size_t inputs) {
  return n && n->key() == key && n->inputs().size() == inputs;
}

std::optional<std::vector<int64_t>> constInts(const Value* v) {
  if (!v->isConstant() || !v->constant().isIntList()) return std::nullopt;
  return v->constant().toIntVector();
}

std::optional<int64_t> constInt(const Value* v) {
  if (!v->isConstant() || !v->constant().isInt()) return std::nullopt;
  return v->constant().toInt();
}

bool isOne(const Value* v) {
  if (!v->isConstant()) return false;
  const c10::IValue& c = v->constant();
  return (c.isInt() && c.toInt() == 1) || (c.isDouble() && c.toDouble() == 1.0);
}

at::Tensor constTensor(const Value* v) {
  return v->isConstant() && v->constant().isTensor() ? v->constant().toTensor() : at::Tensor();
}

// The index of the input of binary node `n` other than `v`, or -1 when `v` is not one of
// its first two inputs.
int otherInput(const Node* n, const Value* v) {
  if (n->input(0) == v) return 1;
  if (n->input(1) == v) return 0;
  return -1;
}

// One matched step; the inputs the fused node reads are taken from these nodes when it
// is built, since fusing the step before rewires them.
struct Match {
  Node* hview;
  Node* addmm;
  Node* gview;
  Node* add;
  int gx_input;  // of `add`
  Node* split;
  Node* m_fc;
  int c_input;  // of `m_fc`
  Node* cadd;
  Node* hmul;
  Node* x_slice;   // the absorbed slice of the input projection, or null
  int64_t x_step;  // its row (start), or -1
};

std::optional<Match> matchAt(Node* split) {
  if (!is(split, "aten::split_with_sizes", 3)) return std::nullopt;
  Block* block = split->owningBlock();
  auto in_block = [block](const Node* n) { return n && n->owningBlock() == block; };
  Match m{};
  m.split = split;

  // gates = add(view(addmm(...)), gx)
  Node* add = split->input(0)->producer();
  if (!is(add, "aten::add.Tensor", 3) || !in_block(add) || !isOne(add->input(2)) ||
      add->output(0)->soleUser() != split)
    return std::nullopt;
  m.add = add;
  for (int which = 0; which < 2 && !m.gview; ++which) {
    Node* gview = add->input(which)->producer();
    if (!is(gview, "aten::view", 2) || !in_block(gview) || gview->output(0)->soleUser() != add) continue;
    Node* addmm = gview->input(0)->producer();
    if (!is(addmm, "aten::addmm", 5) || !in_block(addmm) || addmm->output(0)->soleUser() != gview) continue;
    m.gview = gview;
    m.addmm = addmm;
    m.gx_input = 1 - which;
  }
  if (!m.gview || !isOne(m.addmm->input(3)) || !isOne(m.addmm->input(4))) return std::nullopt;
  m.hview = m.addmm->input(1)->producer();
  if (!is(m.hview, "aten::view", 2)) return std::nullopt;

  // Constants and shapes.
  const at::Tensor bias = constTensor(m.addmm->input(0)), wt = constTensor(m.addmm->input(2));
  const auto h_shape = constInts(m.hview->input(1)), gates_shape = constInts(m.gview->input(1));
  const auto sizes = constInts(split->input(1));
  const auto dim = constInt(split->input(2));
  if (!bias.defined() || !wt.defined() || !h_shape || !gates_shape || !sizes || !dim) return std::nullopt;
  if (sizes->size() != 4 || (*sizes)[0] <= 0) return std::nullopt;
  const int64_t hidden = (*sizes)[0];
  for (int64_t s : *sizes)
    if (s != hidden) return std::nullopt;
  if (wt.dim() != 2 || wt.size(1) != 4 * hidden || bias.dim() != 1 || bias.size(0) != 4 * hidden ||
      h_shape->size() != 2 || (*h_shape)[1] != wt.size(0) || gates_shape->empty() ||
      gates_shape->back() != 4 * hidden)
    return std::nullopt;
  int64_t gates_numel = 1;
  for (int64_t s : *gates_shape) gates_numel *= s;
  const int64_t rank = static_cast<int64_t>(gates_shape->size());
  if (gates_numel != (*h_shape)[0] * 4 * hidden || (*dim != rank - 1 && *dim != -1)) return std::nullopt;

  // Gates in ATen's order i, f, g, o.
  Node* unpack = split->output(0)->soleUser();
  if (!unpack || unpack->kind() != "prim::ListUnpack" || !in_block(unpack) || unpack->outputs().size() != 4)
    return std::nullopt;
  const char* kActs[4] = {"aten::sigmoid", "aten::sigmoid", "aten::tanh", "aten::sigmoid"};
  Node* act[4];
  for (int k = 0; k < 4; ++k) {
    act[k] = unpack->output(k)->soleUser();
    if (!is(act[k], kActs[k], 1) || !in_block(act[k])) return std::nullopt;
  }
  // c' = f * c + i * g
  Node* m_fc = act[1]->output(0)->soleUser();
  Node* m_ig = act[0]->output(0)->soleUser();
  if (!is(m_fc, "aten::mul.Tensor", 2) || !is(m_ig, "aten::mul.Tensor", 2) || m_fc == m_ig || !in_block(m_fc) ||
      !in_block(m_ig))
    return std::nullopt;
  m.m_fc = m_fc;
  m.c_input = otherInput(m_fc, act[1]->output(0));
  if (otherInput(m_ig, act[0]->output(0)) < 0 || m_ig->input(otherInput(m_ig, act[0]->output(0))) != act[2]->output(0) ||
      act[2]->output(0)->soleUser() != m_ig)
    return std::nullopt;
  Node* cadd = m_fc->output(0)->soleUser();
  if (!is(cadd, "aten::add.Tensor", 3) || !in_block(cadd) || !isOne(cadd->input(2)) ||
      m_ig->output(0)->soleUser() != cadd || otherInput(cadd, m_fc->output(0)) < 0 ||
      cadd->input(otherInput(cadd, m_fc->output(0))) != m_ig->output(0))
    return std::nullopt;
  m.cadd = cadd;
  // h' = o * tanh(c')
  Node* hmul = act[3]->output(0)->soleUser();
  if (!is(hmul, "aten::mul.Tensor", 2) || !in_block(hmul)) return std::nullopt;
  const int tc_input = otherInput(hmul, act[3]->output(0));
  Node* tc = tc_input < 0 ? nullptr : hmul->input(tc_input)->producer();
  if (!is(tc, "aten::tanh", 1) || tc->input(0) != cadd->output(0) || tc->output(0)->soleUser() != hmul ||
      !in_block(tc))
    return std::nullopt;
  m.hmul = hmul;

  // gx = squeeze.dims(slice.Tensor(G, 0, t, t + 1, 1), [0]), each read once: the fused
  // node reads row t of G itself.
  m.x_step = -1;
  Value* gx = add->input(m.gx_input);
  Node* squeeze = gx->producer();
  if (is(squeeze, "aten::squeeze.dims", 2) && in_block(squeeze) && gx->soleUser() == add &&
      add->input(1 - m.gx_input) != gx) {
    const auto dims = constInts(squeeze->input(1));
    Node* slice = squeeze->input(0)->producer();
    if (dims && dims->size() == 1 && (*dims)[0] == 0 && is(slice, "aten::slice.Tensor", 5) && in_block(slice) &&
        slice->output(0)->soleUser() == squeeze) {
      const auto sdim = constInt(slice->input(1)), start = constInt(slice->input(2)), end = constInt(slice->input(3));
      if (sdim && *sdim == 0 && start && *start >= 0 && end && *end == *start + 1 && isOne(slice->input(4))) {
        m.x_slice = slice;
        m.x_step = *start;
      }
    }
  }
  return m;
}

void rewrite(Graph& g, const Match& m) {
  NodeSpec spec;
  spec.kind = kLstmStepOp;
  spec.schema = &lstmStepSchema();
  Value* gx = m.x_slice ? m.x_slice->input(0) : m.add->input(m.gx_input);
  spec.inputs = {gx,
                 m.hview->input(0),
                 m.m_fc->input(m.c_input),
                 m.addmm->input(2),
                 m.addmm->input(0),
                 m.hview->input(1),
                 m.gview->input(1),
                 m.split->input(2),
                 g.addConstant(c10::IValue(m.x_step), c10::IntType::get())};
  spec.outputs = {{c10::TensorType::get(), m.hmul->output(0)->name()},
                  {c10::TensorType::get(), m.cadd->output(0)->name()}};
  // Just before c' = f * c + i * g: every input is read by an earlier node of the step.
  Node* step = m.cadd->owningBlock()->insertNodeBefore(m.cadd, std::move(spec));
  g.replaceAllUses(m.hmul->output(0), step->output(0));
  g.replaceAllUses(m.cadd->output(0), step->output(1));
}

void collect(Block& b, std::vector<Match>& out) {
  for (Node* n : b.nodes()) {
    if (auto m = matchAt(n)) out.push_back(*m);
    for (const auto& sb : n->blocks()) collect(*sb, out);
  }
}

}  // namespace

size_t fuseLstmCells(Graph& g, const PassContext&) {
  std::vector<Match> matches;
  collect(*g.top(), matches);  // all matched before any rewrite
  // In graph order: a step's h and c are the previous step's outputs, rewired to the
  // previous fused node by then (rewrite reads them from the nodes).
  for (const Match& m : matches) rewrite(g, m);
  return matches.size();
}

void registerLstmCellFusion(PluginRegistrar& r) {
  r.pass("fuse_lstm_cell", kPassOrderFuse, fuseLstmCells,
         "one LSTM time step of the core ATen IR (addmm, split into 4 gates, sigmoid/tanh, muls) -> one "
         "ops_cpu::lstm_step node");
}

}  // namespace brisk::ops_cpu
