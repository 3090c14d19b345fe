// A convolution chain as one oneDNN primitive, called directly (libdnnl): convolution +
// bias + post-ops (a residual add as a binary post-op, then an eltwise one). Batch norm
// is folded into the weight and bias here. Activations flow in channels-last (NHWC)
// order, which oneDNN's convolutions read and write without reordering: an NCHW input
// is converted once at the partition's edge, and the result stays NHWC unless a reader
// needs NCHW.
//
// A chain with a depthwise step (conv1x1 -> dwconv3x3, fusion_chain.h) runs as one
// primitive with oneDNN's depthwise post-op where oneDNN has a fused kernel for the
// shape, and otherwise as two primitives through an intermediate (oneDNN's reference
// "fused" implementation only chains the two: measured no faster on Zen 3, so it is
// not taken).
//
// Per input shape (shape_cache.h) the partition builds the primitive once, with the
// weight in the blocked format that primitive chose (packed_weights.h: one copy per
// format, shared by the shapes that ask for it); a call then only points
// oneDNN's memory objects at the tensors and executes (dnnl_runtime.h). The output and
// oneDNN's scratchpad are allocated through the c10 allocator, which brisk serves from
// its memory plan.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/graph/graph.h"
#include "delegates/onednn/conv_weights.h"
#include "delegates/onednn/dnnl_runtime.h"
#include "delegates/onednn/fused_ops.h"
#include "delegates/onednn/packed_weights.h"
#include "delegates/onednn/post_ops.h"
#include "delegates/onednn/shape_cache.h"
#include "ops_cpu/simd/layout_transpose.h"

namespace brisk::onednn {
namespace out = ops_cpu::out;
namespace {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;
constexpr auto f32 = dnnl::memory::data_type::f32;
constexpr auto bf16 = dnnl::memory::data_type::bf16;

// Layout conversions at the edges between NCHW and NHWC, and from blocked to NCHW, with
// brisk's own transposes (layout_transpose.h: 1.3-6x faster than oneDNN's reorder on
// one Zen 4 core) when they run on one thread; with more intra-op threads oneDNN's
// reorder splits the work. Fewer than 8 channels (an RGB image) have no 8x8 blocks:
// oneDNN's reorder.
bool ownTranspose(int64_t channels) { return channels >= 8 && at::get_num_threads() == 1; }

// How an activation tensor is laid out: plain NCHW or NHWC (4-d), or oneDNN's blocked
// nChw{8,16}c, carried between two convolution partitions as a contiguous 5-d tensor
// [N, ceil(C / block), H, W, block] (channels padded with zeros to whole blocks).
enum class Layout { kNchw = 0, kNhwc = 1, kBlocked = 2 };
constexpr size_t kLayouts = 3;

tag tagOf(Layout l, int64_t block) {
  if (l == Layout::kNchw) return tag::nchw;
  if (l == Layout::kNhwc) return tag::nhwc;
  return block == 16 ? tag::nChw16c : tag::nChw8c;
}

const char* layoutName(Layout l, int64_t block) {
  if (l == Layout::kNchw) return "nchw";
  if (l == Layout::kNhwc) return "nhwc";
  return block == 16 ? "nChw16c" : "nChw8c";
}

// oneDNN's reference implementation ("ref:any", "ref_fused_convolution"): correct, and
// many times slower than its JIT kernels.
bool isReference(const dnnl::primitive_desc_base& pd) { return std::string(pd.impl_info_str()).rfind("ref", 0) == 0; }

dnnl::memory::data_type dnnlType(at::ScalarType t) { return t == at::kBFloat16 ? bf16 : f32; }

// A tensor that arrives in a layout other than the one the primitive reads: its
// description as it arrives, and the reorder into the primitive's. `needed` false: it
// is read as it is.
struct Conversion {
  bool needed = false;
  dnnl::memory::desc from;
  dnnl::reorder reorder;
};

Conversion conversion(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  Conversion c;
  c.from = from;
  c.needed = from != to;
  if (c.needed) c.reorder = dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), from, cpuEngine(), to));
  return c;
}

// The primitive and packed weight for one input shape. `ok` false: oneDNN has no
// kernel for it, and the nested block runs instead.
struct ConvPlan {
  bool ok = false;
  dnnl::convolution_forward prim;  // the whole chain, or its 1x1 step when `split`
  dnnl::memory weights;  // oneDNN's blocked copy (PackedWeights), perhaps shared with other plans
  dnnl::memory dw_weights;  // the depthwise post-op's weight (a fused depthwise step)
  // A depthwise step oneDNN does not fuse for this shape: its own primitive, after
  // `prim`, reading `mid`.
  bool split = false;
  dnnl::convolution_forward dw_prim;
  dnnl::memory::desc mid;
  dnnl::memory::desc src, dst;              // as the primitive reads and writes them
  std::optional<dnnl::memory::desc> other;  // the residual add's operand, likewise
  size_t scratch_bytes = 0;
  // The source and the residual per layout they may arrive in (Layout's index). A 5-d
  // input shape arrives blocked; a 4-d one NCHW or NHWC. oneDNN's reorders run 2-3x
  // faster than ATen's contiguous(channels_last) on these shapes (a 3-channel 224x224
  // image, b8: 326 vs 856 us on Zen 3).
  std::array<Conversion, kLayouts> x_from, other_from;
  // An NCHW fp32 source becomes the NHWC fp32 `src`: brisk's own transpose may do it.
  bool nchw_to_nhwc = false;
  // The result as the readers take it, when the primitive computes it in another
  // layout: an NCHW reader of an NHWC or blocked computation, a blocked region's exit,
  // a blocked partition that got only a reference kernel (computed NHWC instead).
  std::optional<dnnl::memory::desc> out;
  dnnl::reorder to_out;
  // fp32 to NCHW, which brisk's own transposes may do: from NHWC (ownTranspose), from
  // blocked (unblockPlanes).
  enum class Own { kNone, kFromNhwc, kFromBlocked } own_out = Own::kNone;
};

// A Runtime's memory objects for one plan: rebound to the call's tensors each call.
struct BoundPlan {
  const ConvPlan* plan = nullptr;
  dnnl::memory src, dst, other, scratch, mid, out;
  std::array<dnnl::memory, kLayouts> x_from, other_from;
};

struct ConvState final : DnnlState {
  std::array<BoundPlan, ShapeCache<ConvPlan>::kSlots + 1> bound;
  std::unique_ptr<const ConvPlan> overflow;
};

class FusedConv final : public CompiledPartition {
 public:
  FusedConv(const FusionChain& c, const Partition& partition, const ConvOptions& o)
      : chain_(c.str()),
        bf16_(o.bf16),
        bf16_output_(o.bf16 && o.bf16_output),
        x_type_(o.bf16 && o.bf16_input ? at::kBFloat16 : at::kFloat),
        other_type_(o.bf16 && o.bf16_other ? at::kBFloat16 : at::kFloat),
        block_(o.block),
        blocked_(o.block > 0 && (o.blocked_output || o.blocked_exit)),
        out_layout_(o.block > 0 && o.blocked_output ? Layout::kBlocked
                    : o.nhwc_output                 ? Layout::kNhwc
                                                    : Layout::kNchw),
        x_blocked_(o.block > 0 && o.blocked_input),
        other_blocked_(o.block > 0 && o.blocked_other),
        other_channels_(o.other_channels),
        conv_(*c.nodes[0], c.bn, partition.releasable) {
    const Node& node = partition.node;
    if (c.dw) dw_ = std::make_unique<ConvWeights>(*c.dw, c.dw_bn, partition.releasable);
    unary_ = c.unary;
    dw_unary_ = c.dw_unary;
    dnnl::post_ops check;
    appendUnary(check, unary_);  // now: an op oneDNN lacks fails the compile, not a call
    appendUnary(check, dw_unary_);
    x_input_ = inputIndex(node, c.nodes[0]->input(0));
    if (c.add) other_input_ = static_cast<int>(inputIndex(node, c.add->input(c.add_other)));
    plans_ = std::make_unique<ShapeCache<ConvPlan>>([this](c10::IntArrayRef x) { return plan(x, blocked_); });
  }

  std::unique_ptr<KernelState> newState() const override { return std::make_unique<ConvState>(); }

  bool run(KernelContext& ctx, KernelState* state) const override {
    if (serve(ctx, *static_cast<ConvState*>(state))) return true;
    // The nested block is fp32 NCHW/NHWC throughout: a bf16 or blocked value from the
    // previous partition would reach ATen's convolution as it is. Graph-consistent
    // shapes never get here (the producer served the same geometry); say so plainly if
    // one does.
    const bool own_input = ctx.tensor(x_input_).dim() == 5 || (other_input_ >= 0 && ctx.tensor(other_input_).dim() == 5);
    if (x_type_ == at::kBFloat16 || other_type_ == at::kBFloat16 || own_input)
      throw std::runtime_error("onednn: an input of shape " + c10::str(ctx.tensor(x_input_).sizes()) +
                               " in the layout or type another convolution partition made for this one, which this "
                               "partition cannot serve (its fallback cannot take it); run with "
                               "--plugin-option onednn.blocked_layout=false, or without precision bf16");
    conv_.weights->restoreDense();  // the nested block reads the dense weights next
    if (dw_) dw_->weights->restoreDense();
    return false;
  }

  std::string describe() const override {
    std::ostringstream os;
    os << chain_ << " " << geometry(conv_);
    if (dw_) os << ", depthwise " << geometry(*dw_);
    os << " (oneDNN convolution" << (bf16_ ? " in bf16" : "") << " in "
       << layoutName(blocked_ ? Layout::kBlocked : Layout::kNhwc, block_) << ", " << plans_->shapes()
       << " input shapes prepared so far, " << conv_.weights->formats() << " packed weight formats"
       << (conv_.weights->denseReleased() ? ", dense weight freed" : "");
    if (dw_)
      os << ", depthwise step fused into the 1x1 kernel for "
         << plans_->count([](const ConvPlan& p) { return p.ok && !p.split; }) << " of them";
    os << ")";
    return os.str();
  }
  std::vector<std::string> edgeConversions() const override {
    const std::string compute = layoutName(blocked_ ? Layout::kBlocked : Layout::kNhwc, block_);
    const std::string type = bf16_ ? " bf16" : "";
    std::vector<std::string> c;
    if (x_blocked_ || x_type_ == at::kBFloat16)
      c.push_back("input: " + std::string(layoutName(x_blocked_ ? Layout::kBlocked : Layout::kNhwc, block_)) +
                  (x_type_ == at::kBFloat16 ? " bf16" : "") + " from a convolution partition" +
                  (x_blocked_ == blocked_ ? "" : ", to " + compute + type));
    else if (blocked_ && conv_.in_channels < 8)  // a stem: oneDNN reads a few-channel image as it is where it can
      c.push_back("input: nchw read as it is into a " + compute + " result where oneDNN can, else to " + compute + type);
    else
      c.push_back("input: to " + compute + type + " unless already " + compute + type);
    if (other_input_ >= 0 && (other_blocked_ || other_type_ == at::kBFloat16))
      c.push_back("residual: " + std::string(layoutName(other_blocked_ ? Layout::kBlocked : Layout::kNhwc, block_)) +
                  (other_type_ == at::kBFloat16 ? " bf16" : "") + " from a convolution partition" +
                  (other_blocked_ == blocked_ ? "" : ", to " + compute));
    else if (other_input_ >= 0 && blocked_)
      c.push_back("residual: to " + compute);
    const std::string out_type = bf16_output_ ? " bf16" : "";
    if (out_layout_ == Layout::kBlocked)
      c.push_back("output: " + compute + out_type + " (read by convolution partitions only)");
    else if (out_layout_ == Layout::kNhwc)
      c.push_back(blocked_ ? "output: " + compute + " -> nhwc" : "output: nhwc" + out_type);
    else
      c.push_back("output: " + compute + " -> nchw");
    return c;
  }
  bool outputPlannable() const override { return true; }

 private:
  // The layout `t` arrives in, or nullopt when this partition does not serve it. A
  // blocked (5-d) tensor is taken only where the graph says one comes (`blocked`).
  std::optional<Layout> arrival(const at::Tensor& t, at::ScalarType type, bool blocked) const {
    if (t.scalar_type() != type || t.layout() != at::kStrided || !t.is_cpu()) return std::nullopt;
    if (t.dim() == 5)
      return blocked && t.size(4) == block_ && t.is_contiguous() ? std::optional<Layout>(Layout::kBlocked) : std::nullopt;
    if (t.dim() != 4) return std::nullopt;
    return t.is_contiguous() && !t.is_contiguous(at::MemoryFormat::ChannelsLast) ? Layout::kNchw : Layout::kNhwc;
  }
  // The logical NCHW sizes of `t`, which arrives in layout `l` with `channels` channels.
  static std::array<int64_t, 4> logical(const at::Tensor& t, Layout l, int64_t channels) {
    return {t.size(0), l == Layout::kBlocked ? channels : t.size(1), t.size(2), t.size(3)};
  }
  int64_t blocks(int64_t channels) const { return (channels + block_ - 1) / block_; }

  // The partition's work; false, having written nothing, for inputs it does not serve.
  bool serve(KernelContext& ctx, ConvState& st) const {
    const at::Tensor& x0 = ctx.tensor(x_input_);
    const std::optional<Layout> xl = arrival(x0, x_type_, x_blocked_);
    if (!xl || x0.numel() == 0) return false;
    if (*xl == Layout::kBlocked ? x0.size(1) != blocks(conv_.in_channels) : x0.size(1) != conv_.in_channels) return false;
    const std::array<int64_t, 4> xs = logical(x0, *xl, conv_.in_channels);
    int64_t oh = conv_.outSize(xs[2], 0), ow = conv_.outSize(xs[3], 1);
    if (dw_) {
      oh = dw_->outSize(oh, 0);
      ow = dw_->outSize(ow, 1);
    }
    if (oh < 1 || ow < 1) return false;
    const int64_t out_channels = conv_.out_channels;  // a depthwise step keeps them
    const std::array<int64_t, 4> out{xs[0], out_channels, oh, ow};
    at::Tensor other;
    Layout ol = Layout::kNhwc;
    if (other_input_ >= 0) {
      const at::Tensor& o = ctx.tensor(other_input_);
      const std::optional<Layout> l = arrival(o, other_type_, other_blocked_);
      if (!l) return false;
      if (*l == Layout::kBlocked) {
        const bool same = other_channels_ == out_channels && o.size(0) == out[0] && o.size(1) == blocks(out_channels) &&
                          o.size(2) == oh && o.size(3) == ow;
        other = same ? o : expandBlocked(o, out);
        if (!other.defined()) return false;
        ol = Layout::kBlocked;
      } else if (!o.sizes().equals(out)) {
        // A broadcasting add runs brisk's kernels, unless the operand came in bf16: the
        // nested block (fp32) cannot take that, so an operand that broadcasts to the
        // result is expanded here (the add's result has the result's shape either way).
        if (other_type_ != at::kBFloat16 || !broadcastsTo(o.sizes(), out)) return false;
        other = o.expand(out).contiguous(at::MemoryFormat::ChannelsLast);
      } else {
        other = o.is_contiguous(at::MemoryFormat::ChannelsLast) ? o : o.contiguous(at::MemoryFormat::ChannelsLast);
      }
    }
    size_t slot = 0;
    const ConvPlan& p = plans_->get(x0.sizes(), st.overflow, &slot);
    if (!p.ok) return false;
    BoundPlan& b = st.bound[slot];
    if (b.plan != &p || slot == ShapeCache<ConvPlan>::kSlots) bind(b, p);
    const at::Tensor x = source(x0, *xl, p, b, st);
    const auto out_type = bf16_output_ ? at::kBFloat16 : at::kFloat;
    const at::TensorOptions y_options = x0.options().dtype(out_type);
    at::Tensor y = out_layout_ == Layout::kBlocked ? at::empty({out[0], blocks(out_channels), oh, ow, block_}, y_options)
                   : out_layout_ == Layout::kNhwc  ? at::empty(out, y_options.memory_format(at::MemoryFormat::ChannelsLast))
                                                   : at::empty(out, y_options);
    at::Tensor scratch = scratchFor(p.scratch_bytes, x);
    if (scratch.defined()) b.scratch.set_data_handle(scratch.data_ptr());
    const at::Tensor computed = p.out ? bufferFor(p.dst, x) : y;
    b.dst.set_data_handle(computed.data_ptr());
    at::Tensor mid;
    if (p.split) {
      mid = bufferFor(p.mid, x);
      b.mid.set_data_handle(mid.data_ptr());
    }
    at::Tensor other_converted;
    if (other.defined()) {
      const Conversion& c = p.other_from[static_cast<size_t>(ol)];
      if (c.needed) {
        other_converted = bufferFor(*p.other, x);
        b.other_from[static_cast<size_t>(ol)].set_data_handle(other.data_ptr());
        b.other.set_data_handle(other_converted.data_ptr());
        st.reorder(c.reorder, b.other_from[static_cast<size_t>(ol)], b.other);
      } else {
        b.other.set_data_handle(other.data_ptr());
      }
    }
    dnnl_exec_arg_t args[8];
    int n = 0;
    args[n++] = {DNNL_ARG_SRC, b.src.get()};
    args[n++] = {DNNL_ARG_WEIGHTS, p.weights.get()};
    args[n++] = {DNNL_ARG_DST, p.split ? b.mid.get() : b.dst.get()};
    if (conv_.bias.defined()) args[n++] = {DNNL_ARG_BIAS, conv_.bias_mem.get()};
    if (scratch.defined()) args[n++] = {DNNL_ARG_SCRATCHPAD, b.scratch.get()};
    if (other.defined()) args[n++] = {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, b.other.get()};
    if (dw_ && !p.split) {
      args[n++] = {DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS, p.dw_weights.get()};
      if (dw_->bias.defined()) args[n++] = {DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS, dw_->bias_mem.get()};
    }
    st.execute(p.prim, args, n);
    if (p.split) {
      n = 0;
      args[n++] = {DNNL_ARG_SRC, b.mid.get()};
      args[n++] = {DNNL_ARG_WEIGHTS, p.dw_weights.get()};
      args[n++] = {DNNL_ARG_DST, b.dst.get()};
      if (dw_->bias.defined()) args[n++] = {DNNL_ARG_BIAS, dw_->bias_mem.get()};
      if (scratch.defined()) args[n++] = {DNNL_ARG_SCRATCHPAD, b.scratch.get()};
      st.execute(p.dw_prim, args, n);
    }
    if (p.out) {
      const auto* from = static_cast<const float*>(computed.data_ptr());
      if (p.own_out == ConvPlan::Own::kFromNhwc && ownTranspose(out_channels)) {
        out::transposePlanes(from, y.data_ptr<float>(), y.size(0), oh * ow, out_channels);
      } else if (p.own_out == ConvPlan::Own::kFromBlocked && ownTranspose(out_channels)) {
        out::unblockPlanes(from, y.data_ptr<float>(), y.size(0), out_channels, oh * ow, block_);
      } else {
        b.out.set_data_handle(y.data_ptr());
        st.reorder(p.to_out, b.dst, b.out);
      }
    }
    ctx.output(0) = std::move(y);
    return true;
  }

  // Blocked residual `o` (of other_channels_ channels) broadcast to the result's sizes
  // `out`, blocked, the padding channels zero; undefined when it does not broadcast to
  // exactly `out`. Rare (a 1x1 result added onto a map), so it may allocate.
  at::Tensor expandBlocked(const at::Tensor& o, const std::array<int64_t, 4>& out) const {
    const std::array<int64_t, 4> from{o.size(0), other_channels_, o.size(2), o.size(3)};
    if (o.size(1) != blocks(other_channels_) || !broadcastsTo(from, out)) return {};
    const at::Tensor planar = o.permute({0, 1, 4, 2, 3}).reshape({o.size(0), -1, o.size(2), o.size(3)});
    at::Tensor padded = at::zeros({out[0], blocks(out[1]) * block_, out[2], out[3]}, o.options());
    padded.narrow(1, 0, out[1]).copy_(planar.narrow(1, 0, other_channels_).expand(out));
    return padded.view({out[0], blocks(out[1]), block_, out[2], out[3]}).permute({0, 1, 3, 4, 2}).contiguous();
  }

  // Whether `from` broadcasts to exactly `to` (so the add's result has to's shape).
  static bool broadcastsTo(c10::IntArrayRef from, c10::IntArrayRef to) {
    if (from.size() > to.size()) return false;
    for (size_t i = 0; i < from.size(); ++i) {
      const int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
      if (f != t && f != 1) return false;
    }
    return true;
  }

  // The convolution's source for input `x0`, which arrives in layout `l`, bound to
  // b.src. An input already as the primitive reads it is used as it is (an NHWC
  // strided view through ATen's copy); otherwise it is converted once into a
  // temporary the memory plan serves.
  at::Tensor source(const at::Tensor& x0, Layout l, const ConvPlan& p, BoundPlan& b, ConvState& st) const {
    const at::Tensor x = l == Layout::kNhwc ? x0.contiguous(at::MemoryFormat::ChannelsLast) : x0;
    const Conversion& c = p.x_from[static_cast<size_t>(l)];
    if (!c.needed) {
      b.src.set_data_handle(x.data_ptr());
      return x;
    }
    at::Tensor converted = bufferFor(p.src, x);
    b.src.set_data_handle(converted.data_ptr());
    if (l == Layout::kNchw && p.nchw_to_nhwc && ownTranspose(x.size(1))) {
      out::transposePlanes(x.data_ptr<float>(), static_cast<float*>(converted.data_ptr()), x.size(0), x.size(1),
                           x.size(2) * x.size(3));
    } else {
      b.x_from[static_cast<size_t>(l)].set_data_handle(x.data_ptr());
      st.reorder(c.reorder, b.x_from[static_cast<size_t>(l)], b.src);
    }
    return converted;
  }

  static std::string geometry(const ConvWeights& w) {
    std::ostringstream os;
    os << w.kh << "x" << w.kw << " " << w.in_channels << "->" << w.out_channels;
    if (w.groups > 1) os << " groups " << w.groups;
    if (w.stride[0] > 1 || w.stride[1] > 1) os << " stride " << w.stride[0];
    if (w.dilation[0] > 1 || w.dilation[1] > 1) os << " dilation " << w.dilation[0];
    return os.str();
  }

  // This Runtime's memory objects for `p` (made on its first call with p's shape).
  static void bind(BoundPlan& b, const ConvPlan& p) {
    b.plan = &p;
    b.src = unboundMemory(p.src);
    b.dst = unboundMemory(p.dst);
    for (size_t l = 0; l < kLayouts; ++l) {
      if (p.x_from[l].needed) b.x_from[l] = unboundMemory(p.x_from[l].from);
      if (p.other_from[l].needed) b.other_from[l] = unboundMemory(p.other_from[l].from);
    }
    if (p.other) b.other = unboundMemory(*p.other);
    if (p.split) b.mid = unboundMemory(p.mid);
    if (p.out) b.out = unboundMemory(*p.out);
    if (p.scratch_bytes) b.scratch = unboundScratchpad(p.scratch_bytes);
  }

  // Built on a Runtime's first call with input sizes `key` (4-d, or 5-d for a blocked
  // input), kept for the Module's life.
  // `blocked`: compute in the blocked layout (the partition's blocked_, unless oneDNN
  // has only its reference kernel for that, below).
  std::unique_ptr<ConvPlan> plan(c10::IntArrayRef key, bool blocked) const {
    auto p = std::make_unique<ConvPlan>();
    const bool blocked_key = key.size() == 5;
    const dims src{key[0], conv_.in_channels, key[2], key[3]};
    const dims mid{key[0], conv_.out_channels, conv_.outSize(key[2], 0), conv_.outSize(key[3], 1)};
    const dims dst = dw_ ? dims{key[0], conv_.out_channels, dw_->outSize(mid[2], 0), dw_->outSize(mid[3], 1)} : mid;
    // The primitive reads and writes one layout (oneDNN has only its reference kernels
    // for a mix): blocked where the result goes on to other convolution partitions,
    // NHWC otherwise. One exception: a source of few channels (an RGB image) arriving
    // NCHW is read as it is into a blocked result, as oneDNN's direct kernels do.
    // The source (and a split depthwise step's intermediate) is in the compute type.
    // The bias is fp32, and so are the result and the residual (oneDNN accumulates in
    // fp32 and writes fp32 from a bf16 kernel) unless they pass between two bf16
    // partitions.
    const auto cdt = bf16_ ? bf16 : f32;
    const tag ct = tagOf(blocked ? Layout::kBlocked : Layout::kNhwc, block_);
    p->dst = dnnl::memory::desc(dst, bf16_output_ ? bf16 : f32, ct);
    if (other_input_ >= 0) {
      const auto odt = dnnlType(other_type_);
      p->other = dnnl::memory::desc(dst, odt, ct);
      p->other_from[static_cast<size_t>(Layout::kNhwc)] = conversion(dnnl::memory::desc(dst, odt, tag::nhwc), *p->other);
      if (other_blocked_)
        p->other_from[static_cast<size_t>(Layout::kBlocked)] =
            conversion(dnnl::memory::desc(dst, odt, tagOf(Layout::kBlocked, block_)), *p->other);
    }
    // The anchor's own post-ops. (A dnnl::post_ops copy shares its object: each list is
    // built afresh.)
    auto anchorOps = [&] {
      dnnl::post_ops ops;
      if (p->other) ops.append_binary(dnnl::algorithm::binary_add, *p->other);
      appendUnary(ops, unary_);
      return ops;
    };
    p->src = dnnl::memory::desc(src, cdt, ct);
    if (blocked && !bf16_ && !blocked_key && !dw_ && conv_.in_channels < 8) {
      const dnnl::memory::desc planar(src, f32, tag::nchw);
      if (auto pd = convPd(conv_, planar, p->dst, anchorOps()); pd && !isReference(*pd))
        p->src = planar;
    }
    const auto xdt = dnnlType(x_type_);
    if (blocked_key) {
      p->x_from[static_cast<size_t>(Layout::kBlocked)] =
          conversion(dnnl::memory::desc(src, xdt, tagOf(Layout::kBlocked, block_)), p->src);
    } else {
      p->x_from[static_cast<size_t>(Layout::kNchw)] = conversion(dnnl::memory::desc(src, xdt, tag::nchw), p->src);
      p->nchw_to_nhwc = xdt == f32 && p->src == dnnl::memory::desc(src, f32, tag::nhwc);
      p->x_from[static_cast<size_t>(Layout::kNhwc)] = conversion(dnnl::memory::desc(src, xdt, tag::nhwc), p->src);
    }
    if (const tag ot = tagOf(out_layout_, block_); ot != ct) {
      p->out = dnnl::memory::desc(dst, p->dst.get_data_type(), ot);
      p->to_out = dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), p->dst, cpuEngine(), *p->out));
      if (ot == tag::nchw && p->dst.get_data_type() == f32)
        p->own_out = ct == tag::nhwc ? ConvPlan::Own::kFromNhwc : ConvPlan::Own::kFromBlocked;
    }
    const dnnl::post_ops ops = anchorOps();
    bool reference = false;  // a split depthwise step got only oneDNN's reference kernel
    if (dw_) {
      // The fused kernel, when oneDNN has one for this shape (not its reference chaining).
      dnnl::post_ops fused = anchorOps();
      fused.append_dw(cdt, dw_->bias.defined() ? f32 : dnnl::memory::data_type::undef, p->dst.get_data_type(), dw_->kh,
                      dw_->stride[0], dw_->padding[0]);
      appendUnary(fused, dw_unary_);
      if (auto pd = convPd(conv_, p->src, p->dst, fused); pd && !isReference(*pd)) {
        p->prim = dnnl::convolution_forward(*pd);
        p->scratch_bytes = pd->scratchpad_desc().get_size();
        p->weights = conv_.weights->get(pd->weights_desc());
        p->dw_weights = dw_->weights->get(pd->query_md(dnnl::query::exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS));
        p->ok = true;
        return p;
      }
      p->split = true;
      p->mid = dnnl::memory::desc(mid, cdt, ct);
      dnnl::post_ops dw_ops;
      appendUnary(dw_ops, dw_unary_);
      auto dw_pd = convPd(*dw_, p->mid, p->dst, dw_ops);
      if (!dw_pd) return p;  // no kernel for this shape: ok stays false
      reference = isReference(*dw_pd);
      p->dw_prim = dnnl::convolution_forward(*dw_pd);
      p->dw_weights = dw_->weights->get(dw_pd->weights_desc());
      p->scratch_bytes = dw_pd->scratchpad_desc().get_size();
    }
    auto pd = convPd(conv_, p->src, p->split ? p->mid : p->dst, ops);
    if (!pd) return p;
    if (blocked && (reference || isReference(*pd))) {
      // No blocked kernel for this one (a dense convolution over 8 channels): compute
      // in NHWC, and reorder the result into the layout the readers take.
      return plan(key, false);
    }
    p->prim = dnnl::convolution_forward(*pd);
    p->scratch_bytes = std::max(p->scratch_bytes, pd->scratchpad_desc().get_size());
    p->weights = conv_.weights->get(pd->weights_desc());
    p->ok = true;
    return p;
  }

  // The primitive descriptor of convolution `w` from `src` to `dst` with `ops`, or
  // nullopt when oneDNN has no kernel for it.
  std::optional<dnnl::convolution_forward::primitive_desc> convPd(const ConvWeights& w, const dnnl::memory::desc& src,
                                                                  const dnnl::memory::desc& dst,
                                                                  const dnnl::post_ops& ops) const {
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    try {
      return dnnl::convolution_forward::primitive_desc(
          cpuEngine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
          dnnl::memory::desc(w.weightDims(), src.get_data_type(), tag::any), w.bias_md, dst, {w.stride[0], w.stride[1]},
          {w.dilation[0] - 1, w.dilation[1] - 1}, {w.padding[0], w.padding[1]}, {w.padding[0], w.padding[1]}, attr);
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
  }

  std::string chain_;
  bool bf16_;                        // source and weights in bf16 (ConvOptions)
  bool bf16_output_;                 // the result in bf16 too
  at::ScalarType x_type_, other_type_;  // what the source and residual arrive as
  int64_t block_;                    // ConvOptions::block
  bool blocked_;                     // compute in the blocked layout
  Layout out_layout_;                // the result as the readers take it
  bool x_blocked_, other_blocked_;   // the source / residual come blocked from a partition
  int64_t other_channels_;           // ConvOptions::other_channels
  ConvWeights conv_;                 // batch norm folded
  std::unique_ptr<ConvWeights> dw_;  // the fused depthwise step, or null
  Unary unary_, dw_unary_;
  size_t x_input_ = 0;
  int other_input_ = -1;
  std::unique_ptr<ShapeCache<ConvPlan>> plans_;
};

}  // namespace

size_t inputIndex(const Node& node, const Value* v) {
  for (size_t i = 0; i < node.inputs().size(); ++i)
    if (node.input(i) == v) return i;
  throw std::runtime_error(v->ref() + " is not an input of the partition");
}

std::unique_ptr<CompiledPartition> compileConv(const FusionChain& chain, const Partition& p, const ConvOptions& o) {
  return std::make_unique<FusedConv>(chain, p, o);
}

}  // namespace brisk::onednn
