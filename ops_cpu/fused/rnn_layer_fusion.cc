// ops_cpu.fuse_rnn_layer (rnn_layer_fusion.h).
#include "ops_cpu/fused/rnn_layer_fusion.h"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/graph/graph.h"
#include "ops_cpu/fused/gru_step.h"
#include "ops_cpu/fused/lstm_step.h"
#include "ops_cpu/fused/rnn_match.h"

namespace brisk::ops_cpu {
namespace {

using namespace rnn;  // rnn_match.h

// Where a step node keeps its operands (lstm_step.h, gru_step.h).
struct StepOp {
  const char* kind;
  const char* layer_op;  // the layer's overload is "input"
  int64_t gates;
  size_t w, b, h_shape, gates_shape, split_dim;
  bool lstm;
};
constexpr StepOp kLstm{kLstmStepOp, "aten::lstm", 4, 3, 4, 5, 6, 7, true};
constexpr StepOp kGru{kGruStepOp, "aten::gru", 3, 2, 3, 4, 5, 6, false};
constexpr size_t kGx = 0, kH = 1, kC = 2, kXStep = 8, kGruXSplitDim = 7;

// Which nodes are live as dead-code elimination will see them: a node is live when it
// has no outputs (kept for its effect) or one of its outputs is returned or read by a
// live node. The step fusions leave the unfused nodes in place until
// eliminate_dead_code_late, still reading the projection and (rewired) the fused steps'
// outputs, so the pattern's "read by X alone" checks count live readers only. A node
// wrongly taken for dead costs work, not correctness: the values it reads stay.
class Liveness {
 public:
  bool live(const Node* n) {
    auto it = memo_.find(n);
    if (it != memo_.end()) return it->second;
    memo_[n] = false;  // a block's dataflow has no cycles
    bool l = n->outputs().empty();
    for (const Value* v : n->outputs())
      for (const Use& u : v->uses()) l = l || !u.user || live(u.user);
    return memo_[n] = l;
  }
  size_t uses(const Value* v) {
    size_t count = 0;
    for (const Use& u : v->uses()) count += !u.user || live(u.user);
    return count;
  }
  // The live node that alone reads `v` (once), else null.
  Node* soleUser(const Value* v) {
    Node* user = nullptr;
    for (const Use& u : v->uses()) {
      if (u.user && !live(u.user)) continue;
      if (user || !u.user) return nullptr;
      user = u.user;
    }
    return user;
  }

 private:
  std::unordered_map<const Node*, bool> memo_;
};

// One direction of one layer.
struct Chain {
  std::vector<Node*> steps;  // in time order of the steps (reversed time when `flip`)
  Node* proj = nullptr;      // addmm(b_ih, X2, W_ih^T)
  Node* flip = nullptr;      // the reverse direction's flip of the projection
  Node* list = nullptr;      // ListConstruct of the outputs in time order
  Node* cat = nullptr;       // cat(list, 0)
  int64_t steps_n = 0, batch = 0, hidden = 0;
  Node* last() const { return steps.back(); }
};

bool sameTensor(const Value* a, const Value* b) {
  if (a == b) return true;
  const at::Tensor x = constTensor(a), y = constTensor(b);
  return x.defined() && y.defined() && x.sizes() == y.sizes() && x.scalar_type() == y.scalar_type() &&
         at::equal(x, y);
}

// X2 of two projections: the same value, or views of one value to the same shape.
bool sameInput(const Value* a, const Value* b) {
  if (a == b) return true;
  const Node *va = a->producer(), *vb = b->producer();
  if (!is(va, "aten::view", 2) || !is(vb, "aten::view", 2) || va->input(0) != vb->input(0)) return false;
  const auto sa = constInts(va->input(1)), sb = constInts(vb->input(1));
  return sa && sb && *sa == *sb;
}

bool isZeroConstant(const Value* v) {
  const at::Tensor t = constTensor(v);
  return t.defined() && t.is_floating_point() && t.numel() > 0 && at::equal(t, at::zeros_like(t));
}

// The projection behind a step's gx: fills chain.proj / flip, T, B and checks that the
// projection is read by this chain's steps alone (`uses` of G, or of G').
bool matchProjection(const StepOp& op, Value* gx, Chain& c, Liveness& live) {
  Node* producer = gx->producer();
  Node* view = producer;
  if (is(producer, "aten::flip", 2)) {
    const auto dims = constInts(producer->input(1));
    if (!dims || dims->size() != 1 || (*dims)[0] != 0) return false;
    c.flip = producer;
    view = producer->input(0)->producer();
    if (!view || live.soleUser(producer->input(0)) != producer) return false;
  }
  if (!is(view, "aten::view", 2)) return false;
  Node* proj = view->input(0)->producer();
  if (!is(proj, "aten::addmm", 5) || live.soleUser(proj->output(0)) != view || !isOne(proj->input(3)) ||
      !isOne(proj->input(4)))
    return false;
  const auto shape = constInts(view->input(1));
  const at::Tensor b_ih = constTensor(proj->input(0)), w_ih_t = constTensor(proj->input(2));
  if (!shape || shape->size() != 3 || (*shape)[0] < 1 || (*shape)[1] < 1 || (*shape)[2] % op.gates != 0 ||
      !b_ih.defined() || b_ih.dim() != 1 || b_ih.size(0) != (*shape)[2] || !w_ih_t.defined() || w_ih_t.dim() != 2 ||
      w_ih_t.size(1) != (*shape)[2] || w_ih_t.size(0) < 1)
    return false;
  c.proj = proj;
  c.steps_n = (*shape)[0];
  c.batch = (*shape)[1];
  c.hidden = (*shape)[2] / op.gates;
  return true;
}

// A step's shapes are those of nn.LSTM / nn.GRU at batch B: h viewed as [B, H], gates
// [1, B, gates * H] split on the last dim (and the GRU's row of G on its last dim).
bool stepShapesFit(const StepOp& op, const Node* s, const Chain& c) {
  const auto h_shape = constInts(s->input(op.h_shape)), gates_shape = constInts(s->input(op.gates_shape));
  const auto split = constInt(s->input(op.split_dim));
  const at::Tensor wt = constTensor(s->input(op.w));
  const int64_t g = op.gates * c.hidden;
  if (!h_shape || *h_shape != std::vector<int64_t>{c.batch, c.hidden} || !gates_shape ||
      *gates_shape != std::vector<int64_t>{1, c.batch, g} || !split || (*split != 2 && *split != -1) ||
      !wt.defined() || wt.dim() != 2 || wt.size(0) != c.hidden || wt.size(1) != g)
    return false;
  if (op.lstm) return true;
  const auto x_split = constInt(s->input(kGruXSplitDim));
  return x_split && (*x_split == 1 || *x_split == -1);
}

// The chain starting at step node `first` (x_step 0), or nullopt.
std::optional<Chain> matchChain(const StepOp& op, Node* first, Liveness& live) {
  Chain c;
  Value* gx = first->input(kGx);
  if (!matchProjection(op, gx, c, live)) return std::nullopt;
  // G (G') is read by exactly T step nodes; follow the state from step to step.
  if (live.uses(gx) != static_cast<size_t>(c.steps_n)) return std::nullopt;
  Node* s = first;
  for (int64_t t = 0; t < c.steps_n; ++t) {
    if (!s || s->kind() != op.kind || s->input(kGx) != gx || constInt(s->input(kXStep)) != t ||
        s->owningBlock() != first->owningBlock() || !stepShapesFit(op, s, c))
      return std::nullopt;
    c.steps.push_back(s);
    if (t + 1 == c.steps_n) break;
    // h is read by the next step and the output list; c by the next step alone.
    Node* next = nullptr;
    for (const Use& u : s->output(0)->uses())
      if (u.user && u.user->kind() == op.kind && u.index == kH && live.live(u.user)) next = u.user;
    if (!next || live.uses(s->output(0)) != 2 || (op.lstm && (live.soleUser(s->output(1)) != next ||
                                                                 next->input(kC) != s->output(1))))
      return std::nullopt;
    s = next;
  }
  // Every step's W_hh and b_hh are the last step's; the first step's weight may differ
  // when its state is a zero constant (its product with the weight is then +0 either
  // way, as long as the weight is finite).
  const Node* last = c.last();
  for (const Node* st : c.steps) {
    if (!sameTensor(st->input(op.b), last->input(op.b))) return std::nullopt;
    if (sameTensor(st->input(op.w), last->input(op.w))) continue;
    if (st != c.steps.front() || !isZeroConstant(st->input(kH)) ||
        !at::isfinite(constTensor(st->input(op.w))).all().item<bool>())
      return std::nullopt;
  }
  // A constant initial state must expand to [1, B, H] as the steps would broadcast it.
  for (size_t input : {kH, kC}) {
    if (input == kC && !op.lstm) continue;
    const at::Tensor t = constTensor(c.steps.front()->input(input));
    if (t.defined() && (t.dim() > 3 || !at::is_expandable_to(t.sizes(), {1, c.batch, c.hidden})))
      return std::nullopt;
  }
  // The outputs, stacked in time order: cat([h_0 .. h_T-1], 0).
  Node* list = nullptr;
  for (const Use& u : last->output(0)->uses())
    if (u.user && u.user->kind() == "prim::ListConstruct" && live.live(u.user)) list = u.user;
  if (!list || list->inputs().size() != c.steps.size() || list->owningBlock() != first->owningBlock())
    return std::nullopt;
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const Node* expect = c.flip ? c.steps[c.steps.size() - 1 - i] : c.steps[i];
    if (list->input(i) != expect->output(0)) return std::nullopt;
  }
  Node* cat = live.soleUser(list->output(0));
  if (!is(cat, "aten::cat", 2) || cat->input(0) != list->output(0) || constInt(cat->input(1)) != 0) return std::nullopt;
  c.list = list;
  c.cat = cat;
  return c;
}

const c10::FunctionSchema* schema(const char* name, const char* overload) {
  return &c10::Dispatcher::singleton().findSchemaOrThrow(name, overload).schema();
}

Value* intList(Graph& g, std::vector<int64_t> v) { return g.addConstant(c10::IValue(std::move(v)), c10::ListType::ofInts()); }
Value* intConst(Graph& g, int64_t v) { return g.addConstant(c10::IValue(v), c10::IntType::get()); }

// Inserts nodes before `before`, in order.
struct Inserter {
  Graph& g;
  Block* block;
  Node* before;
  Node* add(const char* kind, const char* overload, const c10::FunctionSchema* s, std::vector<Value*> inputs,
            std::vector<c10::TypePtr> outputs) {
    NodeSpec spec;
    spec.kind = kind;
    spec.overload = overload;
    spec.schema = s;
    spec.inputs = std::move(inputs);
    for (auto& t : outputs) spec.outputs.push_back({std::move(t), ""});
    return block->insertNodeBefore(before, std::move(spec));
  }
  Value* list(std::vector<Value*> items) {
    return add("prim::ListConstruct", "", nullptr, std::move(items), {c10::ListType::ofTensors()})->output(0);
  }
};

// One direction's initial state as [1, B, H]: a constant expanded at load (matchChain
// checked that it expands), else an aten::expand node (the steps read the state
// through a view and broadcasting; expanding fails where broadcasting would).
Value* initialState(Inserter& ins, Value* v, const Chain& c, at::Tensor* constant) {
  const std::vector<int64_t> shape{1, c.batch, c.hidden};
  const at::Tensor t = constTensor(v);
  if (t.defined() && t.dim() <= 3 && at::is_expandable_to(t.sizes(), shape)) {
    *constant = t.expand(shape).contiguous();
    return nullptr;
  }
  return ins.add("aten::expand", "", schema("aten::expand", ""),
                 {v, intList(ins.g, shape), ins.g.addConstant(c10::IValue(false), c10::BoolType::get())},
                 {c10::TensorType::get()})
      ->output(0);
}

// The layer's state input for one state (h or c) over its directions: [D, B, H].
Value* stackedState(Inserter& ins, const std::vector<const Chain*>& dirs, size_t input) {
  std::vector<at::Tensor> consts;
  std::vector<Value*> values;
  for (const Chain* c : dirs) {
    at::Tensor t;
    values.push_back(initialState(ins, c->steps.front()->input(input), *c, &t));
    consts.push_back(t);
  }
  bool all_const = true;
  for (const at::Tensor& t : consts) all_const = all_const && t.defined();
  if (all_const) return ins.g.addConstant(consts.size() == 1 ? consts[0] : at::cat(consts, 0), c10::TensorType::get());
  for (size_t i = 0; i < values.size(); ++i)
    if (!values[i]) values[i] = ins.g.addConstant(consts[i], c10::TensorType::get());
  if (values.size() == 1) return values[0];
  return ins.add("aten::cat", "", schema("aten::cat", ""), {ins.list(values), intConst(ins.g, 0)},
                 {c10::TensorType::get()})
      ->output(0);
}

// Live reads of `v` other than by `skip` (the chain's output list) now read `to`.
void redirectOtherUses(Value* v, const Node* skip, Value* to, Liveness& live) {
  const std::vector<Use> uses = v->uses();
  for (const Use& u : uses) {
    if ((skip && u.user == skip) || (u.user && !live.live(u.user))) continue;
    if (u.user)
      u.user->replaceInput(u.index, to);
    else
      u.block->replaceReturn(u.index, to);
  }
}

// torch.export stacks a one-layer, one-direction nn.LSTM / nn.GRU's final state as
//   view(cat([squeeze.dims(state, [0])], 0), [1, B, H])
// which is the layer's h_n (c_n) [1, B, H] itself: its readers read that instead (the
// squeeze, the list, the cat's copy and the view go).
void unstackFinalState(Value* state, const Chain& c, Liveness& live) {
  for (const Use& u : std::vector<Use>(state->uses())) {
    Node* squeeze = u.user;
    if (!is(squeeze, "aten::squeeze.dims", 2) || constInts(squeeze->input(1)) != std::vector<int64_t>{0}) continue;
    Node* list = live.soleUser(squeeze->output(0));
    if (!list || list->kind() != "prim::ListConstruct" || list->inputs().size() != 1) continue;
    Node* cat = live.soleUser(list->output(0));
    if (!is(cat, "aten::cat", 2) || constInt(cat->input(1)) != 0) continue;
    Node* view = live.soleUser(cat->output(0));
    if (!is(view, "aten::view", 2) ||
        constInts(view->input(1)) != std::vector<int64_t>{1, c.batch, c.hidden})
      continue;
    redirectOtherUses(view->output(0), nullptr, state, live);
  }
}

// Replaces one layer: `dirs` = {forward} or {forward, reverse}; `out` is the value the
// layer's output sequence replaces; the layer node goes before `before`.
void rewrite(Graph& g, const StepOp& op, const std::vector<const Chain*>& dirs, Value* out, Node* before,
             Liveness& live) {
  Inserter ins{g, before->owningBlock(), before};
  const Chain& f = *dirs[0];
  const at::Tensor w_ih_t = constTensor(f.proj->input(2));
  const int64_t inputs = w_ih_t.size(0);
  std::vector<at::Tensor> params;
  for (const Chain* c : dirs) {
    const Node* last = c->last();
    params.push_back(constTensor(c->proj->input(2)).t().contiguous());
    params.push_back(constTensor(last->input(op.w)).t().contiguous());
    params.push_back(constTensor(c->proj->input(0)).contiguous());
    params.push_back(constTensor(last->input(op.b)).contiguous());
  }
  Value* x = ins.add("aten::view", "", schema("aten::view", ""),
                     {f.proj->input(1), intList(g, {f.steps_n, f.batch, inputs})}, {c10::TensorType::get()})
                 ->output(0);
  Value* h0 = stackedState(ins, dirs, kH);
  Value* hx = h0;
  if (op.lstm) hx = ins.list({h0, stackedState(ins, dirs, kC)});
  auto boolean = [&](bool b) { return g.addConstant(c10::IValue(b), c10::BoolType::get()); };
  std::vector<c10::TypePtr> outs(op.lstm ? 3 : 2, c10::TensorType::get());
  Node* layer = ins.add(op.layer_op, "input", schema(op.layer_op, "input"),
                        {x, hx, g.addConstant(c10::IValue(params), c10::ListType::ofTensors()), boolean(true),
                         intConst(g, 1), g.addConstant(c10::IValue(0.0), c10::FloatType::get()), boolean(false),
                         boolean(dirs.size() == 2), boolean(false)},
                        std::move(outs));
  g.replaceAllUses(out, layer->output(0));
  // The last steps' states, read elsewhere: h_n / c_n (direction d's slice of them).
  for (size_t d = 0; d < dirs.size(); ++d) {
    const Node* last = dirs[d]->last();
    for (size_t k = 0; k < (op.lstm ? 2u : 1u); ++k) {
      Value* state = last->output(k);
      const Node* skip = k == 0 ? dirs[d]->list : nullptr;
      bool read = false;
      for (const Use& u : state->uses()) read = read || !u.user || (u.user != skip && live.live(u.user));
      if (!read) continue;
      Value* final_state = layer->output(1 + k);
      if (dirs.size() > 1)
        final_state = ins.add("aten::slice", "Tensor", schema("aten::slice", "Tensor"),
                              {final_state, intConst(g, 0), intConst(g, static_cast<int64_t>(d)),
                               intConst(g, static_cast<int64_t>(d) + 1), intConst(g, 1)},
                              {c10::TensorType::get()})
                          ->output(0);
      redirectOtherUses(state, skip, final_state, live);
      if (dirs.size() == 1) unstackFinalState(final_state, f, live);
    }
  }
}

// Whether every read of the last steps' states outside their lists comes after
// `position` in the block (the layer node replaces them there).
bool statesReadAfter(const StepOp& op, const Chain& c, size_t position,
                     const std::unordered_map<const Node*, size_t>& order, Liveness& live) {
  for (size_t k = 0; k < (op.lstm ? 2u : 1u); ++k)
    for (const Use& u : c.last()->output(k)->uses()) {
      if (!u.user || u.user == c.list || !live.live(u.user)) continue;
      const Node* n = u.user->enclosingNodeIn(c.last()->owningBlock());
      auto it = n ? order.find(n) : order.end();
      if (it == order.end() || it->second <= position) return false;
    }
  return true;
}

// The position in `block` of the last node that produces an input of the layer over
// `dirs` (the forward projection's X2, which the layer reads, and the initial states);
// nullopt when one was inserted by this pass (not in `order`).
std::optional<size_t> lastProducer(const StepOp& op, const std::vector<const Chain*>& dirs, Block& block,
                                   const std::unordered_map<const Node*, size_t>& order) {
  size_t last = 0;
  std::vector<Value*> inputs{dirs[0]->proj->input(1)};
  for (const Chain* c : dirs) {
    inputs.push_back(c->steps.front()->input(kH));
    if (op.lstm) inputs.push_back(c->steps.front()->input(kC));
  }
  for (Value* v : inputs) {
    const Node* p = v->producer() ? v->producer()->enclosingNodeIn(&block) : nullptr;
    if (!p) continue;  // a constant, a parameter, or from an enclosing block
    auto it = order.find(p);
    if (it == order.end()) return std::nullopt;
    last = std::max(last, it->second);
  }
  return last;
}

size_t fuseBlock(Graph& g, const StepOp& op, Block& block) {
  const std::vector<Node*> nodes = block.nodes();  // before any insertion
  std::unordered_map<const Node*, size_t> order;
  for (size_t i = 0; i < nodes.size(); ++i) order[nodes[i]] = i;
  Liveness live;
  std::vector<Chain> forward, reverse;
  for (Node* n : nodes)
    if (n->kind() == op.kind && constInt(n->input(kXStep)) == 0 && live.live(n))
      if (auto c = matchChain(op, n, live)) (c->flip ? reverse : forward).push_back(std::move(*c));

  size_t layers = 0;
  std::unordered_set<const Chain*> paired;
  for (const Chain& r : reverse) {
    // cat([Y_forward, Y_reverse], 2) over the same X2: one bidirectional layer.
    Node* list2 = live.soleUser(r.cat->output(0));
    if (!list2 || list2->kind() != "prim::ListConstruct" || list2->inputs().size() != 2 ||
        list2->input(1) != r.cat->output(0))
      continue;
    Node* cat2 = live.soleUser(list2->output(0));
    if (!is(cat2, "aten::cat", 2) || cat2->input(0) != list2->output(0) ||
        (constInt(cat2->input(1)) != 2 && constInt(cat2->input(1)) != -1))
      continue;
    for (const Chain& f : forward) {
      if (paired.count(&f) || f.cat->output(0) != list2->input(0) || live.soleUser(f.cat->output(0)) != list2 ||
          f.steps_n != r.steps_n || f.batch != r.batch || f.hidden != r.hidden ||
          !sameInput(f.proj->input(1), r.proj->input(1)) ||
          constTensor(f.proj->input(2)).size(0) != constTensor(r.proj->input(2)).size(0))
        continue;
      // The layer goes right after the last of its inputs' producers, so that it also
      // precedes readers of the forward direction's final state placed before the
      // reverse steps (torch.export writes them there).
      std::optional<size_t> position = lastProducer(op, {&f, &r}, block, order);
      if (!position || !statesReadAfter(op, f, *position, order, live) ||
          !statesReadAfter(op, r, *position, order, live))
        break;
      rewrite(g, op, {&f, &r}, cat2->output(0), nodes.at(*position + 1), live);
      paired.insert(&f);
      ++layers;
      break;
    }
  }
  for (const Chain& f : forward) {
    if (paired.count(&f)) continue;
    rewrite(g, op, {&f}, f.cat->output(0), nodes.at(order.at(f.last()) + 1), live);
    ++layers;
  }
  return layers;
}

}  // namespace

size_t fuseRnnLayers(Graph& g, const PassContext&) {
  size_t layers = 0;
  for (Block* b : g.allBlocks())
    for (const StepOp* op : {&kLstm, &kGru}) layers += fuseBlock(g, *op, *b);
  return layers;
}

void registerRnnLayerFusion(PluginRegistrar& r) {
  r.pass("fuse_rnn_layer", kPassOrderFuse, fuseRnnLayers,
         "the fused steps of one unrolled nn.LSTM / nn.GRU layer (one or both directions), its input projection "
         "and output cats -> one aten::lstm.input / aten::gru.input node (brisk's layer kernel)");
}

}  // namespace brisk::ops_cpu
