#include "ops_cpu/fused/view_chain.h"

#include <ATen/ExpandUtils.h>
#include <ATen/TensorUtils.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/function_schema.h>
#include <c10/core/TensorImpl.h>

#include <cstdint>
#include <limits>
#include <unordered_set>
#include <vector>

#include "ops_cpu/native/common.h"

namespace brisk::ops_cpu {
namespace {

using native::IntVec;

enum Op : int64_t { kSlice, kSelect, kSqueezeAll, kSqueezeDims, kUnsqueeze, kView, kExpand, kPermute, kTranspose };

const char* opName(int64_t op) {
  static const char* const kNames[] = {"slice", "select", "squeeze", "squeeze", "unsqueeze",
                                       "view",  "expand", "permute", "transpose"};
  return kNames[op];
}

// One view op and its constant arguments (lists flattened into `args`).
struct Step {
  int64_t op;
  IntVec args;
};

// --- encoding: the node's "steps" attribute is [op, nargs, args...]* --------------------

bool constInt(const Value* v, int64_t& out) {
  if (!v->isConstant() || !v->constant().isInt()) return false;
  out = v->constant().toInt();
  return true;
}

// An int[] constant: an IntList, or (as the PT2 frontend makes some) a generic list of ints.
bool constIntList(const Value* v, IntVec& out) {
  if (!v->isConstant() || !v->constant().isList()) return false;
  const c10::IValue& list = v->constant();
  if (!list.isIntList())
    for (const c10::IValue& e : list.toListRef())
      if (!e.isInt()) return false;
  native::readIntList(list, out);
  return true;
}

// An int? start / end of slice: None is 0 / "to the end", as in ATen.
bool constOptInt(const Value* v, int64_t none_value, int64_t& out) {
  if (!v->isConstant()) return false;
  if (v->constant().isNone()) {
    out = none_value;
    return true;
  }
  return constInt(v, out);
}

// The step a node is, when it is a view op this pass covers with constant arguments.
bool toStep(const Node& n, Step& s) {
  const std::string& key = n.key();
  const auto& in = n.inputs();
  int64_t a = 0, b = 0, c = 0;
  s.args.clear();
  if (key == "aten::slice.Tensor" && in.size() == 5) {
    s.op = kSlice;
    if (!constInt(in[1], a) || !constOptInt(in[2], 0, b) ||
        !constOptInt(in[3], std::numeric_limits<int64_t>::max(), c))
      return false;
    int64_t step = 0;
    if (!constInt(in[4], step)) return false;
    s.args = {a, b, c, step};
    return true;
  }
  if (key == "aten::select.int" && in.size() == 3) {
    s.op = kSelect;
    if (!constInt(in[1], a) || !constInt(in[2], b)) return false;
    s.args = {a, b};
    return true;
  }
  if (key == "aten::squeeze" && in.size() == 1) {
    s.op = kSqueezeAll;
    return true;
  }
  if (key == "aten::squeeze.dim" && in.size() == 2) {
    s.op = kSqueezeDims;
    if (!constInt(in[1], a)) return false;
    s.args = {a};
    return true;
  }
  if (key == "aten::squeeze.dims" && in.size() == 2) {
    s.op = kSqueezeDims;
    return constIntList(in[1], s.args);
  }
  if (key == "aten::unsqueeze" && in.size() == 2) {
    s.op = kUnsqueeze;
    if (!constInt(in[1], a)) return false;
    s.args = {a};
    return true;
  }
  if (key == "aten::view" && in.size() == 2) {
    s.op = kView;
    return constIntList(in[1], s.args);
  }
  if (key == "aten::expand" && (in.size() == 2 || in.size() == 3)) {
    s.op = kExpand;  // `implicit` only matters to autograd
    return constIntList(in[1], s.args);
  }
  if (key == "aten::permute" && in.size() == 2) {
    s.op = kPermute;
    return constIntList(in[1], s.args);
  }
  if (key == "aten::transpose.int" && in.size() == 3) {
    s.op = kTranspose;
    if (!constInt(in[1], a) || !constInt(in[2], b)) return false;
    s.args = {a, b};
    return true;
  }
  return false;
}

std::vector<int64_t> encode(const std::vector<Step>& steps) {
  std::vector<int64_t> out;
  for (const Step& s : steps) {
    out.push_back(s.op);
    out.push_back(static_cast<int64_t>(s.args.size()));
    out.insert(out.end(), s.args.begin(), s.args.end());
  }
  return out;
}

std::vector<Step> decode(const std::vector<int64_t>& flat) {
  std::vector<Step> out;
  for (size_t i = 0; i + 1 < flat.size();) {
    Step s;
    s.op = flat[i];
    const auto n = static_cast<size_t>(flat[i + 1]);
    s.args.assign(flat.begin() + static_cast<std::ptrdiff_t>(i + 2),
                  flat.begin() + static_cast<std::ptrdiff_t>(i + 2 + n));
    out.push_back(std::move(s));
    i += 2 + n;
  }
  return out;
}

// --- the kernel: ATen's view geometry on integers ----------------------------------------

struct Geometry {
  IntVec sizes, strides;
  int64_t offset = 0;
};

// `d` wrapped into [0, n); false when out of range (ATen raises).
bool wrapDim(int64_t& d, int64_t n) {
  if (n <= 0 || d < -n || d >= n) return false;
  if (d < 0) d += n;
  return true;
}

// Each returns false, leaving `g` unspecified, for what ATen would refuse or where its
// rule has a case this code does not repeat; the kernel then runs ATen's ops.
bool slice(Geometry& g, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (step <= 0 || !wrapDim(dim, static_cast<int64_t>(g.sizes.size()))) return false;
  const int64_t size = g.sizes[dim];
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = start < 0 ? 0 : (start >= size ? size : start);
  end = end < start ? start : (end >= size ? size : end);
  g.offset += start * g.strides[dim];
  g.sizes[dim] = (end - start + step - 1) / step;
  g.strides[dim] *= step;
  return true;
}

bool select(Geometry& g, int64_t dim, int64_t index) {
  if (!wrapDim(dim, static_cast<int64_t>(g.sizes.size()))) return false;
  const int64_t size = g.sizes[dim];
  if (index < -size || index >= size) return false;
  if (index < 0) index += size;
  g.offset += index * g.strides[dim];
  g.sizes.erase(g.sizes.begin() + dim);
  g.strides.erase(g.strides.begin() + dim);
  return true;
}

// squeeze() (all size-1 dims) or squeeze(dims): only the listed dims of size 1 go.
bool squeeze(Geometry& g, const IntVec* dims) {
  const auto n = static_cast<int64_t>(g.sizes.size());
  if (n == 0) return false;  // a 0-dim tensor: ATen's rule, not repeated here
  uint64_t drop = 0;
  if (n > 64) return false;
  if (dims) {
    for (int64_t d : *dims) {
      if (!wrapDim(d, n)) return false;
      drop |= uint64_t{1} << d;
    }
  } else {
    drop = ~uint64_t{0};
  }
  IntVec sizes, strides;
  for (int64_t d = 0; d < n; ++d) {
    if ((drop >> d & 1) && g.sizes[d] == 1) continue;
    sizes.push_back(g.sizes[d]);
    strides.push_back(g.strides[d]);
  }
  g.sizes = std::move(sizes);
  g.strides = std::move(strides);
  return true;
}

bool unsqueeze(Geometry& g, int64_t dim) {
  const auto n = static_cast<int64_t>(g.sizes.size());
  if (!wrapDim(dim, n + 1)) return false;
  // ATen's inferUnsqueezeGeometry: the stride that keeps the new dim's neighbour in place.
  const int64_t stride = dim >= n ? 1 : g.sizes[dim] * g.strides[dim];
  g.sizes.insert(g.sizes.begin() + dim, 1);
  g.strides.insert(g.strides.begin() + dim, stride);
  return true;
}

bool view(Geometry& g, const IntVec& proposed) {
  int64_t numel = 1;
  for (int64_t s : g.sizes) numel *= s;
  at::DimVector shape(proposed.begin(), proposed.end());
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) return false;
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      return false;
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) return false;
    shape[infer] = numel / known;
  } else if (known != numel) {
    return false;
  }
  auto strides = at::detail::computeStride(g.sizes, g.strides, shape);
  if (!strides) return false;  // not viewable: ATen's view raises
  g.sizes.assign(shape.begin(), shape.end());
  g.strides.assign(strides->begin(), strides->end());
  return true;
}

bool expand(Geometry& g, const IntVec& target) {
  const auto n = static_cast<int64_t>(g.sizes.size());
  const auto m = static_cast<int64_t>(target.size());
  if (n == 0 || m < n) return false;  // a 0-dim input: ATen's rule, not repeated here
  IntVec sizes(m), strides(m);
  // ATen's inferExpandGeometry, from the last dim: -1 keeps a size, a size-1 dim
  // broadcasts (stride 0), a new leading dim gets the stride of the dim inside it times
  // that dim's size.
  for (int64_t i = m - 1; i >= 0; --i) {
    const int64_t d = n - 1 - (m - 1 - i);
    int64_t size = d >= 0 ? g.sizes[d] : 1;
    int64_t stride = d >= 0 ? g.strides[d] : sizes[i + 1] * strides[i + 1];
    int64_t want = target[i];
    if (want == -1) {
      if (d < 0) return false;
      want = size;
    }
    if (want < 0) return false;
    if (size != want) {
      if (size != 1) return false;
      size = want;
      stride = 0;
    }
    sizes[i] = size;
    strides[i] = stride;
  }
  g.sizes = std::move(sizes);
  g.strides = std::move(strides);
  return true;
}

bool permute(Geometry& g, const IntVec& dims) {
  const auto n = static_cast<int64_t>(g.sizes.size());
  if (static_cast<int64_t>(dims.size()) != n || n > 64) return false;
  IntVec sizes(n), strides(n);
  uint64_t seen = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = dims[i];
    if (!wrapDim(d, n) || (seen >> d & 1)) return false;
    seen |= uint64_t{1} << d;
    sizes[i] = g.sizes[d];
    strides[i] = g.strides[d];
  }
  g.sizes = std::move(sizes);
  g.strides = std::move(strides);
  return true;
}

bool transpose(Geometry& g, int64_t a, int64_t b) {
  const auto n = static_cast<int64_t>(g.sizes.size());
  if (!wrapDim(a, n) || !wrapDim(b, n)) return false;
  std::swap(g.sizes[a], g.sizes[b]);
  std::swap(g.strides[a], g.strides[b]);
  return true;
}

bool apply(const Step& s, Geometry& g) {
  const IntVec& a = s.args;
  switch (s.op) {
    case kSlice: return slice(g, a[0], a[1], a[2], a[3]);
    case kSelect: return select(g, a[0], a[1]);
    case kSqueezeAll: return squeeze(g, nullptr);
    case kSqueezeDims: return squeeze(g, &a);
    case kUnsqueeze: return unsqueeze(g, a[0]);
    case kView: return view(g, a);
    case kExpand: return expand(g, a);
    case kPermute: return permute(g, a);
    case kTranspose: return transpose(g, a[0], a[1]);
    default: return false;
  }
}

// ATen's own ops, in order: tensors the integer rules do not serve, and errors.
at::Tensor applyAten(at::Tensor t, const std::vector<Step>& steps) {
  for (const Step& s : steps) {
    const IntVec& a = s.args;
    const c10::IntArrayRef list(a.data(), a.size());
    switch (s.op) {
      case kSlice: t = t.slice(a[0], a[1], a[2], a[3]); break;
      case kSelect: t = t.select(a[0], a[1]); break;
      case kSqueezeAll: t = t.squeeze(); break;
      case kSqueezeDims: t = t.squeeze(list); break;
      case kUnsqueeze: t = t.unsqueeze(a[0]); break;
      case kView: t = t.view(list); break;
      case kExpand: t = t.expand(list); break;
      case kPermute: t = t.permute(list); break;
      case kTranspose: t = t.transpose(a[0], a[1]); break;
      default: break;
    }
  }
  return t;
}

std::unique_ptr<Kernel> makeViewChain(KernelBuildContext& b) {
  auto it = b.node().attributes().find("steps");
  if (it == b.node().attributes().end() || !it->second.isIntList()) return nullptr;
  std::vector<Step> steps = decode(it->second.toIntVector());
  if (steps.empty()) return nullptr;
  std::string what = "one view of";
  for (const Step& s : steps) what += std::string(" ") + opName(s.op);
  return native::lambda(
      [steps = std::move(steps)](KernelContext& ctx) {
        // Below autograd's view tracking, as ops_cpu's single view kernels run.
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        const at::Tensor& x = ctx.tensor(0);
        if (native::plainCpu(x)) {
          Geometry g{IntVec(x.sizes().begin(), x.sizes().end()), IntVec(x.strides().begin(), x.strides().end()),
                     x.storage_offset()};
          bool ok = true;
          for (size_t i = 0; ok && i < steps.size(); ++i) ok = apply(steps[i], g);
          if (ok) {
            // What ATen's views make: a TensorImpl over the same storage.
            at::Tensor out = at::detail::make_tensor<c10::TensorImpl>(c10::TensorImpl::VIEW, c10::Storage(x.storage()),
                                                                      x.key_set(), x.dtype());
            out.unsafeGetTensorImpl()->set_sizes_and_strides(g.sizes, g.strides, g.offset);
            ctx.output(0) = std::move(out);
            return;
          }
        }
        ctx.output(0) = applyAten(x, steps);
      },
      std::move(what));
}

// --- the pass ----------------------------------------------------------------------------

const c10::FunctionSchema* viewChainSchema() {
  // "(Tensor(a) self) -> Tensor(a)", as aten::view's: the result aliases the input, which
  // escape analysis and the memory plan read.
  static const c10::FunctionSchema* schema = [] {
    c10::AliasInfo a;
    a.addBeforeSet(c10::Symbol::fromQualString("alias::a"));
    return new c10::FunctionSchema(
        kViewChainKind, "", {c10::Argument("self", c10::TensorType::get(), std::nullopt, std::nullopt, false, a)},
        {c10::Argument("", c10::TensorType::get(), std::nullopt, std::nullopt, false, a)});
  }();
  return schema;
}

// The node reading `n`'s result when that is its only reader and reads it as its first
// input (the tensor a view op views); null otherwise.
Node* soleViewReader(const Node& n) {
  if (n.outputs().size() != 1) return nullptr;
  const Value* v = n.output(0);
  if (v->uses().size() != 1 || v->uses().front().isReturn() || v->uses().front().index != 0) return nullptr;
  Node* next = v->soleUser();
  return next && next->owningBlock() == n.owningBlock() ? next : nullptr;
}

size_t fuseBlock(Block& block) {
  size_t fused = 0;
  std::unordered_set<const Node*> done;
  const std::vector<Node*> nodes = block.nodes();
  for (Node* first : nodes) {
    if (done.count(first)) continue;
    std::vector<Node*> chain;
    std::vector<Step> steps;
    Step s;
    for (Node* n = first; n && toStep(*n, s); n = soleViewReader(*n)) {
      chain.push_back(n);
      steps.push_back(s);
    }
    for (Node* n : chain) done.insert(n);
    if (chain.size() < 2) continue;
    Node* last = chain.back();
    NodeSpec spec;
    spec.kind = kViewChainKind;
    spec.schema = viewChainSchema();
    spec.inputs = {first->input(0)};
    spec.outputs.emplace_back(last->output(0)->type(), last->output(0)->name());
    Node* node = block.insertNodeBefore(last, std::move(spec));
    node->setAttribute("steps", c10::IValue(encode(steps)));
    block.graph()->replaceAllUses(last->output(0), node->output(0));
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) block.eraseNode(*it);
    fused += chain.size();
  }
  return fused;
}

}  // namespace

size_t fuseViewChains(Graph& g, const PassContext& ctx) {
  // The chain node has a native kernel only.
  if (ctx.options.fallback_only || !ctx.options.use_native) return 0;
  size_t fused = 0;
  for (Block* b : g.allBlocks()) {
    // A delegate partition's nested block is its fallback: left as the backend saw it.
    if (b->owningNode() && b->owningNode()->kind() == kDelegateKind) continue;
    fused += fuseBlock(*b);
  }
  return fused;
}

void registerViewChain(PluginRegistrar& r) {
  r.native(kViewChainKind, makeViewChain);
  // After the late dead-code pass: the RNN and pointwise fusions read view nodes and
  // leave dead readers of them behind, which would end chains early.
  r.pass("fuse_view_chain", kPassOrderCleanUp + 10, fuseViewChains,
         "runs of >= 2 view ops (slice, select, squeeze, unsqueeze, view, expand, permute, transpose) with constant "
         "arguments -> one ops_cpu::view_chain node: one tensor made per run instead of one per op");
}

}  // namespace brisk::ops_cpu
