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
// The first step of nn.LSTM without an initial state has h = 0, a constant, so the
// load-time fold has already computed gh3 = b_hh + 0 W_hh^T: gates = add(GH, gx) with GH
// a constant. That step fuses too, with a zero state and weight and GH's row as the
// bias (Match::folded_bias says why the bits are the same).
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
#include "ops_cpu/fused/rnn_match.h"

namespace brisk::ops_cpu {
namespace {

using namespace rnn;  // rnn_match.h

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
  Node* hview;  // null for a folded step (below)
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
  // A folded step: h was a constant (nn.LSTM's zero initial state), so the load-time
  // fold computed addmm(b_hh, h, W_hh^T) into the constant `gh` read by `add`. When
  // its rows are all equal to one row b, that is the step with state 0, weight 0 and
  // bias b: 0 * 0 = +0, +0 + +0 = +0 and +0 + b = b in every GEMM path, so the fused
  // node's gates are gh's bits. (rnn_layer_fusion.cc then finds the real W_hh in the
  // next step.)
  at::Tensor folded_bias;  // b ([4H]) of a folded step, else undefined
  std::vector<int64_t> folded_shape;  // gh's shape
};

// gh = view(addmm(b_hh, view(h, h_shape), W_hh^T, 1, 1), gates_shape), read by `add`
// alone: fills m.hview, m.addmm, m.gview.
bool matchRecurrentGemm(Match& m, Value* gh, Block* block) {
  Node* gview = gh->producer();
  if (!is(gview, "aten::view", 2) || gview->owningBlock() != block || gh->soleUser() != m.add) return false;
  Node* addmm = gview->input(0)->producer();
  if (!is(addmm, "aten::addmm", 5) || addmm->owningBlock() != block || addmm->output(0)->soleUser() != gview ||
      !isOne(addmm->input(3)) || !isOne(addmm->input(4)) || !is(addmm->input(1)->producer(), "aten::view", 2))
    return false;
  m.gview = gview;
  m.addmm = addmm;
  m.hview = addmm->input(1)->producer();
  return true;
}

// gh is a constant fp32 tensor [..., 4H] whose rows all equal its first: fills the
// folded fields.
bool matchFoldedGemm(Match& m, const Value* gh, int64_t hidden) {
  const at::Tensor t = constTensor(gh);
  if (!t.defined() || t.scalar_type() != at::kFloat || t.dim() < 1 || t.size(-1) != 4 * hidden || t.numel() == 0)
    return false;
  const at::Tensor rows = t.reshape({-1, 4 * hidden});
  const at::Tensor first = rows[0];
  if (!at::equal(rows, first.expand_as(rows))) return false;  // also refuses NaN
  m.folded_bias = first.contiguous().clone();
  m.folded_shape = t.sizes().vec();
  return true;
}

std::optional<Match> matchAt(Node* split) {
  if (!is(split, "aten::split_with_sizes", 3)) return std::nullopt;
  Block* block = split->owningBlock();
  auto in_block = [block](const Node* n) { return n && n->owningBlock() == block; };
  Match m{};
  m.split = split;
  const auto sizes = constInts(split->input(1));
  const auto dim = constInt(split->input(2));
  if (!sizes || !dim || sizes->size() != 4 || (*sizes)[0] <= 0) return std::nullopt;
  const int64_t hidden = (*sizes)[0];
  for (int64_t s : *sizes)
    if (s != hidden) return std::nullopt;

  // gates = add(view(addmm(...)), gx), or add(gh, gx) for a folded step
  Node* add = split->input(0)->producer();
  if (!is(add, "aten::add.Tensor", 3) || !in_block(add) || !isOne(add->input(2)) ||
      add->output(0)->soleUser() != split)
    return std::nullopt;
  m.add = add;
  for (int which = 0; which < 2 && !m.gview; ++which)
    if (matchRecurrentGemm(m, add->input(which), block)) m.gx_input = 1 - which;
  for (int which = 0; which < 2 && !m.gview && !m.folded_bias.defined(); ++which)
    if (matchFoldedGemm(m, add->input(which), hidden)) m.gx_input = 1 - which;
  if (!m.gview && !m.folded_bias.defined()) return std::nullopt;

  // Constants and shapes.
  std::vector<int64_t> gates_shape = m.folded_shape;
  if (m.gview) {
    const at::Tensor bias = constTensor(m.addmm->input(0)), wt = constTensor(m.addmm->input(2));
    const auto h_shape = constInts(m.hview->input(1));
    const auto shape = constInts(m.gview->input(1));
    if (!bias.defined() || !wt.defined() || !h_shape || !shape) return std::nullopt;
    if (wt.dim() != 2 || wt.size(1) != 4 * hidden || bias.dim() != 1 || bias.size(0) != 4 * hidden ||
        h_shape->size() != 2 || (*h_shape)[1] != wt.size(0))
      return std::nullopt;
    int64_t numel = 1;
    for (int64_t s : *shape) numel *= s;
    if (numel != (*h_shape)[0] * 4 * hidden) return std::nullopt;
    gates_shape = *shape;
  }
  const int64_t rank = static_cast<int64_t>(gates_shape.size());
  if (gates_shape.empty() || gates_shape.back() != 4 * hidden || (*dim != rank - 1 && *dim != -1))
    return std::nullopt;

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

  // gx = squeeze.dims(slice.Tensor(G, 0, t, t + 1, 1), [0]): the fused node reads row t
  // of G itself.
  m.x_step = -1;
  Value* gx = add->input(m.gx_input);
  if (add->input(1 - m.gx_input) != gx) m.x_slice = rnn::rowSliceOf(gx, add);
  if (m.x_slice) m.x_step = *constInt(m.x_slice->input(2));
  return m;
}

void rewrite(Graph& g, const Match& m) {
  NodeSpec spec;
  spec.kind = kLstmStepOp;
  spec.schema = &lstmStepSchema();
  Value* gx = m.x_slice ? m.x_slice->input(0) : m.add->input(m.gx_input);
  Value *h, *w_hh_t, *b_hh, *h_shape, *gates_shape;
  if (m.hview) {
    h = m.hview->input(0);
    w_hh_t = m.addmm->input(2);
    b_hh = m.addmm->input(0);
    h_shape = m.hview->input(1);
    gates_shape = m.gview->input(1);
  } else {
    // The folded step: state 0 [rows, H], W_hh^T 0 [H, 4H] (a transposed view, as the
    // export's permuted weights are, so the BLAS path applies), bias b.
    const int64_t n = m.folded_bias.size(0), hidden = n / 4;
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < m.folded_shape.size(); ++i) rows *= m.folded_shape[i];
    const auto opts = m.folded_bias.options();
    h = g.addConstant(at::zeros({rows, hidden}, opts), c10::TensorType::get());
    w_hh_t = g.addConstant(at::zeros({n, hidden}, opts).t(), c10::TensorType::get());
    b_hh = g.addConstant(m.folded_bias, c10::TensorType::get());
    h_shape = g.addConstant(c10::IValue(std::vector<int64_t>{rows, hidden}), c10::ListType::ofInts());
    gates_shape = g.addConstant(c10::IValue(m.folded_shape), c10::ListType::ofInts());
  }
  spec.inputs = {gx,
                 h,
                 m.m_fc->input(m.c_input),
                 w_hh_t,
                 b_hh,
                 h_shape,
                 gates_shape,
                 m.split->input(2),
                 g.addConstant(c10::IValue(m.x_step), c10::IntType::get())};
  spec.outputs = {{c10::TensorType::get(), m.hmul->output(0)->name()},
                  {c10::TensorType::get(), m.cadd->output(0)->name()}};
  // Just before c' = f * c + i * g: every input is read by an earlier node of the step.
  Node* step = m.cadd->owningBlock()->insertNodeBefore(m.cadd, std::move(spec));
  g.replaceAllUses(m.hmul->output(0), step->output(0));
  g.replaceAllUses(m.cadd->output(0), step->output(1));
}

}  // namespace

size_t fuseLstmCells(Graph& g, const PassContext&) { return rnn::fuseSteps(g, matchAt, rewrite); }

void registerLstmCellFusion(PluginRegistrar& r) {
  r.pass("fuse_lstm_cell", kPassOrderFuse, fuseLstmCells,
         "one LSTM time step of the core ATen IR (addmm, split into 4 gates, sigmoid/tanh, muls) -> one "
         "ops_cpu::lstm_step node");
}

}  // namespace brisk::ops_cpu
