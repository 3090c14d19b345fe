// ops_cpu.fuse_gru_cell (gru_cell_fusion.h). The pattern, as torch.export's core ATen
// IR writes one step of nn.GRU (the input projection of all steps computed before the
// loop; gx is this step's slice of it):
//
//   xr, xz, xn = prim::ListUnpack(aten::split_with_sizes(gx, [H, H, H], last dim))
//                (gx = squeeze.dims(slice.Tensor(G, 0, t, t + 1, 1), [0]) read once: the
//                fused node reads row t of G and the two views go too)
//   hv    = aten::view(h, [M, H])
//   gh    = aten::addmm(b_hh, hv, W_hh^T, beta=1, alpha=1)     b_hh, W_hh^T constants
//   gh3   = aten::view(gh, gates_shape)                         gates_shape[-1] = 3H
//   hr, hz, hn = prim::ListUnpack(aten::split_with_sizes(gh3, [H, H, H], last dim))
//   r  = sigmoid(add(hr, xr));  z = sigmoid(add(hz, xz))        (adds: either order)
//   n  = tanh(add(xn, mul(hn, r)))                              (either order)
//   h' = add(mul(sub(h, n), z), n)                              (mul, add: either order)
//
// Every value between the splits and h' must be read by the next node of the pattern
// only (n: by the sub and the last add), and all nodes must sit in one block;
// otherwise the step is left alone (a value read elsewhere would keep the unfused
// nodes alive and compute the step twice). Float addition and multiplication are
// commutative bit for bit, so their operand order does not change the result; the
// subtraction's is checked.
#include "ops_cpu/fused/gru_cell_fusion.h"

#include <ATen/ATen.h>

#include <optional>
#include <vector>

#include "core/graph/graph.h"
#include "ops_cpu/fused/gru_step.h"
#include "ops_cpu/fused/rnn_match.h"

namespace brisk::ops_cpu {
namespace {

using namespace rnn;  // rnn_match.h

bool isSplit3(const Node* split, int64_t hidden) {
  if (!is(split, "aten::split_with_sizes", 3)) return false;
  const auto sizes = constInts(split->input(1));
  return sizes && sizes->size() == 3 && (*sizes)[0] == hidden && (*sizes)[1] == hidden && (*sizes)[2] == hidden &&
         constInt(split->input(2));
}

// One matched step; the fused node's inputs are read from these nodes when it is
// built, since fusing the previous step rewires them.
struct Match {
  Node* split_x;
  Node* x_slice;  // the absorbed slice of the input projection, or null
  int64_t x_step;  // its row (start), or -1
  Node* hview;
  Node* addmm;
  Node* gview;
  Node* split_h;
  Node* add_h;
};

std::optional<Match> matchAt(Node* split_h) {
  if (!is(split_h, "aten::split_with_sizes", 3)) return std::nullopt;
  Block* block = split_h->owningBlock();
  auto in_block = [block](const Node* n) { return n && n->owningBlock() == block; };
  auto binary = [&](Node* n, const char* key, bool alpha) {
    return n && in_block(n) && (alpha ? is(n, key, 3) && isOne(n->input(2)) : is(n, key, 2));
  };
  Match m{};
  m.split_h = split_h;

  // gh3 = view(addmm(b_hh, view(h), W_hh^T))
  m.gview = split_h->input(0)->producer();
  if (!is(m.gview, "aten::view", 2) || !in_block(m.gview) || m.gview->output(0)->soleUser() != split_h)
    return std::nullopt;
  m.addmm = m.gview->input(0)->producer();
  if (!is(m.addmm, "aten::addmm", 5) || !in_block(m.addmm) || m.addmm->output(0)->soleUser() != m.gview ||
      !isOne(m.addmm->input(3)) || !isOne(m.addmm->input(4)))
    return std::nullopt;
  m.hview = m.addmm->input(1)->producer();
  if (!is(m.hview, "aten::view", 2)) return std::nullopt;
  Value* h = m.hview->input(0);

  // Constants and shapes: W_hh^T [H, 3H], b_hh [3H], h viewed as [M, H].
  const at::Tensor bias = constTensor(m.addmm->input(0)), wt = constTensor(m.addmm->input(2));
  const auto h_shape = constInts(m.hview->input(1)), gates_shape = constInts(m.gview->input(1));
  if (!bias.defined() || !wt.defined() || !h_shape || !gates_shape || wt.dim() != 2) return std::nullopt;
  const int64_t hidden = wt.size(0);
  if (hidden <= 0 || wt.size(1) != 3 * hidden || bias.dim() != 1 || bias.size(0) != 3 * hidden ||
      h_shape->size() != 2 || (*h_shape)[1] != hidden || gates_shape->empty() || gates_shape->back() != 3 * hidden ||
      !isSplit3(split_h, hidden))
    return std::nullopt;
  int64_t gates_numel = 1;
  for (int64_t s : *gates_shape) gates_numel *= s;
  const int64_t rank = static_cast<int64_t>(gates_shape->size());
  const int64_t dim = *constInt(split_h->input(2));
  if (gates_numel != (*h_shape)[0] * 3 * hidden || (dim != rank - 1 && dim != -1)) return std::nullopt;

  Node* unpack_h = split_h->output(0)->soleUser();
  if (!unpack_h || unpack_h->kind() != "prim::ListUnpack" || !in_block(unpack_h) || unpack_h->outputs().size() != 3)
    return std::nullopt;
  Value* hr = unpack_h->output(0);
  Value* hz = unpack_h->output(1);
  Value* hn = unpack_h->output(2);

  // r = sigmoid(hr + xr), where xr comes from the split of gx.
  Node* add_r = hr->soleUser();
  if (!binary(add_r, "aten::add.Tensor", true)) return std::nullopt;
  Value* xr = other(add_r, hr);
  Node* unpack_x = xr ? xr->producer() : nullptr;
  if (!unpack_x || unpack_x->kind() != "prim::ListUnpack" || !in_block(unpack_x) || unpack_x->outputs().size() != 3 ||
      unpack_x->output(0) != xr)
    return std::nullopt;
  m.split_x = unpack_x->input(0)->producer();
  if (!isSplit3(m.split_x, hidden) || !in_block(m.split_x) || m.split_x->output(0)->soleUser() != unpack_x)
    return std::nullopt;
  Value* xz = unpack_x->output(1);
  Value* xn = unpack_x->output(2);
  Node* sig_r = add_r->output(0)->soleUser();
  if (!is(sig_r, "aten::sigmoid", 1) || !in_block(sig_r) || xr->soleUser() != add_r) return std::nullopt;

  // z = sigmoid(hz + xz)
  Node* add_z = hz->soleUser();
  if (!binary(add_z, "aten::add.Tensor", true) || other(add_z, hz) != xz || xz->soleUser() != add_z)
    return std::nullopt;
  Node* sig_z = add_z->output(0)->soleUser();
  if (!is(sig_z, "aten::sigmoid", 1) || !in_block(sig_z)) return std::nullopt;

  // n = tanh(xn + hn * r)
  Node* mul_rn = hn->soleUser();
  if (!binary(mul_rn, "aten::mul.Tensor", false) || other(mul_rn, hn) != sig_r->output(0) ||
      sig_r->output(0)->soleUser() != mul_rn)
    return std::nullopt;
  Node* add_n = mul_rn->output(0)->soleUser();
  if (!binary(add_n, "aten::add.Tensor", true) || other(add_n, mul_rn->output(0)) != xn || xn->soleUser() != add_n)
    return std::nullopt;
  Node* tanh_n = add_n->output(0)->soleUser();
  if (!is(tanh_n, "aten::tanh", 1) || !in_block(tanh_n)) return std::nullopt;
  Value* n = tanh_n->output(0);

  // h' = (h - n) * z + n; n read by exactly those two nodes.
  if (n->uses().size() != 2) return std::nullopt;
  Node* sub = nullptr;
  for (const Use& u : n->uses())
    if (u.user && is(u.user, "aten::sub.Tensor", 3) && u.index == 1) sub = u.user;
  if (!sub || !in_block(sub) || sub->input(0) != h || !isOne(sub->input(2))) return std::nullopt;
  Node* mul_z = sub->output(0)->soleUser();
  if (!binary(mul_z, "aten::mul.Tensor", false) || other(mul_z, sub->output(0)) != sig_z->output(0) ||
      sig_z->output(0)->soleUser() != mul_z)
    return std::nullopt;
  Node* add_h = mul_z->output(0)->soleUser();
  if (!binary(add_h, "aten::add.Tensor", true) || other(add_h, mul_z->output(0)) != n) return std::nullopt;
  for (const Use& u : n->uses())
    if (u.user != sub && u.user != add_h) return std::nullopt;
  m.add_h = add_h;

  // gx = squeeze.dims(slice.Tensor(G, 0, t, t + 1, 1), [0]): the fused node reads row t
  // of G itself.
  m.x_slice = rnn::rowSliceOf(m.split_x->input(0), m.split_x);
  m.x_step = m.x_slice ? *constInt(m.x_slice->input(2)) : -1;
  return m;
}

void rewrite(Graph& g, const Match& m) {
  NodeSpec spec;
  spec.kind = kGruStepOp;
  spec.schema = &gruStepSchema();
  Value* gx = m.x_slice ? m.x_slice->input(0) : m.split_x->input(0);
  spec.inputs = {gx,
                 m.hview->input(0),
                 m.addmm->input(2),
                 m.addmm->input(0),
                 m.hview->input(1),
                 m.gview->input(1),
                 m.split_h->input(2),
                 m.split_x->input(2),
                 g.addConstant(c10::IValue(m.x_step), c10::IntType::get())};
  spec.outputs = {{c10::TensorType::get(), m.add_h->output(0)->name()}};
  // Just before h' = (h - n) * z + n: every input is read by an earlier node of the step.
  Node* step = m.add_h->owningBlock()->insertNodeBefore(m.add_h, std::move(spec));
  g.replaceAllUses(m.add_h->output(0), step->output(0));
}

}  // namespace

size_t fuseGruCells(Graph& g, const PassContext&) { return rnn::fuseSteps(g, matchAt, rewrite); }

void registerGruCellFusion(PluginRegistrar& r) {
  r.pass("fuse_gru_cell", kPassOrderFuse, fuseGruCells,
         "one GRU time step of the core ATen IR (addmm, split into 3 gates, sigmoid/tanh, (h - n) * z + n) -> one "
         "ops_cpu::gru_step node");
}

}  // namespace brisk::ops_cpu
