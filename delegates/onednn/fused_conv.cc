// A convolution chain as one oneDNN primitive, called directly (libdnnl): convolution +
// bias + post-ops (a residual add as a binary post-op, then an eltwise one). Batch norm
// is folded into the weight and bias here. Activations flow in channels-last (NHWC)
// order, which oneDNN's convolutions read and write without reordering: an NCHW input
// is converted once at the partition's edge, and the result stays NHWC unless a reader
// needs NCHW.
//
// Per input shape (shape_cache.h) the partition builds the primitive once, with the
// weight in the blocked format that primitive chose (packed_weights.h: one copy per
// format, shared by the shapes that ask for it); a call then only points
// oneDNN's memory objects at the tensors and executes (dnnl_runtime.h). The output and
// oneDNN's scratchpad are allocated through the c10 allocator, which brisk serves from
// its memory plan.
#include <ATen/ATen.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/graph/graph.h"
#include "delegates/onednn/dnnl_runtime.h"
#include "delegates/onednn/fused_ops.h"
#include "delegates/onednn/packed_weights.h"
#include "delegates/onednn/post_ops.h"
#include "delegates/onednn/shape_cache.h"

namespace brisk::onednn {
namespace {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;
constexpr auto f32 = dnnl::memory::data_type::f32;

std::vector<int64_t> pair2(const Value* v, const char* what) {
  std::vector<int64_t> l = v->constant().toIntVector();
  if (l.size() == 1) l.push_back(l[0]);
  if (l.size() != 2) throw std::runtime_error(std::string("conv ") + what + " must have 1 or 2 values");
  return l;
}

at::Tensor constTensorOr(const Value* v, const at::Tensor& otherwise) {
  return v->constant().isNone() ? otherwise : v->constant().toTensor();
}

// The primitive and packed weight for one input shape. `ok` false: oneDNN has no
// kernel for it, and the nested block runs instead.
struct ConvPlan {
  bool ok = false;
  dnnl::convolution_forward prim;
  dnnl::memory weights;  // oneDNN's blocked copy (PackedWeights), perhaps shared with other plans
  dnnl::memory::desc src, dst;
  std::optional<dnnl::memory::desc> other;  // the residual add's operand
  size_t scratch_bytes = 0;
  // Layout conversions at the partition's edges: oneDNN's reorders run 2-3x faster than
  // ATen's contiguous(channels_last) on these shapes (a 3-channel 224x224 image, b8:
  // 326 vs 856 us on Zen 3).
  dnnl::memory::desc nchw_src, nchw_dst;
  dnnl::reorder to_nhwc;    // an NCHW-contiguous input
  dnnl::reorder from_nhwc;  // the result, when a reader needs NCHW
};

// A Runtime's memory objects for one plan: rebound to the call's tensors each call.
struct BoundPlan {
  const ConvPlan* plan = nullptr;
  dnnl::memory src, dst, other, scratch, nchw_src, nchw_dst;
};

struct ConvState final : DnnlState {
  std::array<BoundPlan, ShapeCache<ConvPlan>::kSlots + 1> bound;
  std::unique_ptr<const ConvPlan> overflow;
};

class FusedConv final : public CompiledPartition {
 public:
  FusedConv(const FusionChain& c, const Partition& partition, bool nhwc_output)
      : chain_(c.str()), nhwc_output_(nhwc_output) {
    const Node& node = partition.node;
    const Node& conv = *c.nodes[0];
    const auto& in = conv.inputs();
    at::Tensor w = in[1]->constant().toTensor();
    at::Tensor b = constTensorOr(in[2], at::Tensor());
    stride_ = pair2(in[3], "stride");
    padding_ = pair2(in[4], "padding");
    dilation_ = pair2(in[5], "dilation");
    groups_ = in[conv.key() == "aten::conv2d" ? 6 : 8]->constant().toInt();
    for (size_t i = 0; i < 2; ++i)
      if (stride_[i] < 1 || dilation_[i] < 1 || padding_[i] < 0) throw std::runtime_error("bad conv geometry");
    if (groups_ < 1 || w.size(0) % groups_ != 0) throw std::runtime_error("bad conv groups");
    if (c.bn) {
      const auto& bi = c.bn->inputs();
      const double eps = bi[c.bn->key() == "aten::batch_norm" ? 7 : 6]->constant().toDouble();
      at::Tensor mean = bi[3]->constant().toTensor(), var = bi[4]->constant().toTensor();
      at::Tensor gamma = constTensorOr(bi[1], at::ones_like(mean)), beta = constTensorOr(bi[2], at::zeros_like(mean));
      at::Tensor scale = gamma / at::sqrt(var + eps);
      w = w * scale.reshape({-1, 1, 1, 1});
      b = ((b.defined() ? b : at::zeros_like(mean)) - mean) * scale + beta;
    }
    out_channels_ = w.size(0);
    in_channels_ = w.size(1) * groups_;
    kh_ = w.size(2);
    kw_ = w.size(3);
    // A folded weight is the partition's own; the graph's may lose its bytes only when
    // nothing else reads them (delegate.h), and comes back exactly (no fold applied).
    const auto& free_ok = partition.releasable;
    const PackedWeights::Dense dense =
        c.bn ? PackedWeights::Dense::kOwned
             : std::find(free_ok.begin(), free_ok.end(), in[1]) != free_ok.end() ? PackedWeights::Dense::kReleasable
                                                                                  : PackedWeights::Dense::kShared;
    weights_ = std::make_unique<PackedWeights>(
        w, dnnl::memory::desc(weightDims(), f32, groups_ > 1 ? tag::goihw : tag::oihw), dense);
    if (b.defined()) {
      if (b.numel() != out_channels_) throw std::runtime_error("bias does not match the weight");
      bias_ = b.contiguous();
      bias_md_ = dnnl::memory::desc({out_channels_}, f32, tag::a);
      bias_mem_ = dnnl::memory(bias_md_, cpuEngine(), bias_.data_ptr());
    }
    unary_ = c.unary;
    dnnl::post_ops check;
    appendUnary(check, unary_);  // now: an op oneDNN lacks fails the compile, not a call
    x_input_ = inputIndex(node, conv.input(0));
    if (c.add) other_input_ = static_cast<int>(inputIndex(node, c.add->input(c.add_other)));
    plans_ = std::make_unique<ShapeCache<ConvPlan>>([this](c10::IntArrayRef x) { return plan(x); });
  }

  std::unique_ptr<KernelState> newState() const override { return std::make_unique<ConvState>(); }

  bool run(KernelContext& ctx, KernelState* state) const override {
    if (serve(ctx, *static_cast<ConvState*>(state))) return true;
    weights_->restoreDense();  // the nested block reads the dense weight next
    return false;
  }

  std::string describe() const override {
    std::ostringstream os;
    os << chain_ << " " << kh_ << "x" << kw_ << " " << in_channels_ << "->" << out_channels_;
    if (groups_ > 1) os << " groups " << groups_;
    if (stride_[0] > 1 || stride_[1] > 1) os << " stride " << stride_[0];
    if (dilation_[0] > 1 || dilation_[1] > 1) os << " dilation " << dilation_[0];
    os << " (oneDNN convolution, " << plans_->shapes() << " input shapes prepared so far, " << weights_->formats()
       << " packed weight formats" << (weights_->denseReleased() ? ", dense weight freed" : "") << ")";
    return os.str();
  }
  std::vector<std::string> edgeConversions() const override {
    std::vector<std::string> c{"input: to nhwc unless already nhwc"};
    c.push_back(nhwc_output_ ? "output: nhwc" : "output: nhwc -> nchw");
    return c;
  }
  bool outputPlannable() const override { return true; }

 private:
  // The partition's work; false, having written nothing, for inputs it does not serve.
  bool serve(KernelContext& ctx, ConvState& st) const {
    const at::Tensor& x0 = ctx.tensor(x_input_);
    if (x0.dim() != 4 || x0.scalar_type() != at::kFloat || x0.layout() != at::kStrided || !x0.is_cpu() ||
        x0.size(1) != in_channels_ || x0.numel() == 0)
      return false;
    const int64_t oh = outSize(x0.size(2), 0), ow = outSize(x0.size(3), 1);
    if (oh < 1 || ow < 1) return false;
    at::Tensor other;
    if (other_input_ >= 0) {
      const at::Tensor& o = ctx.tensor(other_input_);
      if (o.scalar_type() != at::kFloat || o.dim() != 4 || o.size(0) != x0.size(0) || o.size(1) != out_channels_ ||
          o.size(2) != oh || o.size(3) != ow || o.layout() != at::kStrided || !o.is_cpu())
        return false;  // a broadcasting add: brisk's kernels
      other = o.is_contiguous(at::MemoryFormat::ChannelsLast) ? o : o.contiguous(at::MemoryFormat::ChannelsLast);
    }
    size_t slot = 0;
    const ConvPlan& p = plans_->get(x0.sizes(), st.overflow, &slot);
    if (!p.ok) return false;
    BoundPlan& b = st.bound[slot];
    if (b.plan != &p || slot == ShapeCache<ConvPlan>::kSlots) bind(b, p);
    at::Tensor x;
    if (x0.is_contiguous(at::MemoryFormat::ChannelsLast)) {
      x = x0;
      b.src.set_data_handle(x.data_ptr());
    } else if (x0.is_contiguous()) {
      x = at::empty(x0.sizes(), x0.options().memory_format(at::MemoryFormat::ChannelsLast));
      b.src.set_data_handle(x.data_ptr());
      b.nchw_src.set_data_handle(x0.data_ptr());
      st.reorder(p.to_nhwc, b.nchw_src, b.src);
    } else {
      x = x0.contiguous(at::MemoryFormat::ChannelsLast);
      b.src.set_data_handle(x.data_ptr());
    }
    at::Tensor y = at::empty({x.size(0), out_channels_, oh, ow}, x.options().memory_format(at::MemoryFormat::ChannelsLast));
    at::Tensor scratch = p.scratch_bytes ? at::empty({static_cast<int64_t>(p.scratch_bytes)}, x.options().dtype(at::kByte)) : at::Tensor();

    b.dst.set_data_handle(y.data_ptr());
    dnnl_exec_arg_t args[6];
    int n = 0;
    args[n++] = {DNNL_ARG_SRC, b.src.get()};
    args[n++] = {DNNL_ARG_WEIGHTS, p.weights.get()};
    args[n++] = {DNNL_ARG_DST, b.dst.get()};
    if (bias_.defined()) args[n++] = {DNNL_ARG_BIAS, bias_mem_.get()};
    if (scratch.defined()) {
      b.scratch.set_data_handle(scratch.data_ptr());
      args[n++] = {DNNL_ARG_SCRATCHPAD, b.scratch.get()};
    }
    if (other.defined()) {
      b.other.set_data_handle(other.data_ptr());
      args[n++] = {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, b.other.get()};
    }
    st.execute(p.prim, args, n);
    if (nhwc_output_) {
      ctx.output(0) = std::move(y);
    } else {
      at::Tensor nchw = at::empty(y.sizes(), y.options().memory_format(at::MemoryFormat::Contiguous));
      b.nchw_dst.set_data_handle(nchw.data_ptr());
      st.reorder(p.from_nhwc, b.dst, b.nchw_dst);
      ctx.output(0) = std::move(nchw);
    }
    return true;
  }

  int64_t outSize(int64_t in, size_t d) const {
    const int64_t k = d == 0 ? kh_ : kw_;
    return (in + 2 * padding_[d] - dilation_[d] * (k - 1) - 1) / stride_[d] + 1;
  }

  // oneDNN's logical weight dims: a leading group dim for grouped convolutions.
  dims weightDims() const {
    return groups_ > 1 ? dims{groups_, out_channels_ / groups_, in_channels_ / groups_, kh_, kw_}
                       : dims{out_channels_, in_channels_, kh_, kw_};
  }

  // This Runtime's memory objects for `p` (made on its first call with p's shape).
  static void bind(BoundPlan& b, const ConvPlan& p) {
    b.plan = &p;
    b.src = unboundMemory(p.src);
    b.dst = unboundMemory(p.dst);
    b.nchw_src = unboundMemory(p.nchw_src);
    b.nchw_dst = unboundMemory(p.nchw_dst);
    if (p.other) b.other = unboundMemory(*p.other);
    if (p.scratch_bytes)
      b.scratch = unboundMemory(dnnl::memory::desc({static_cast<int64_t>(p.scratch_bytes)}, dnnl::memory::data_type::u8, tag::a));
  }

  // Built on a Runtime's first call with input sizes `x`, kept for the Module's life.
  std::unique_ptr<const ConvPlan> plan(c10::IntArrayRef x) const {
    auto p = std::make_unique<ConvPlan>();
    const dims src{x[0], x[1], x[2], x[3]};
    const dims dst{x[0], out_channels_, outSize(x[2], 0), outSize(x[3], 1)};
    p->src = dnnl::memory::desc(src, f32, tag::nhwc);
    p->dst = dnnl::memory::desc(dst, f32, tag::nhwc);
    p->nchw_src = dnnl::memory::desc(src, f32, tag::nchw);
    p->nchw_dst = dnnl::memory::desc(dst, f32, tag::nchw);
    p->to_nhwc = dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), p->nchw_src, cpuEngine(), p->src));
    p->from_nhwc = dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), p->dst, cpuEngine(), p->nchw_dst));
    dnnl::post_ops ops;
    if (other_input_ >= 0) {
      p->other = p->dst;
      ops.append_binary(dnnl::algorithm::binary_add, p->dst);
    }
    appendUnary(ops, unary_);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::convolution_forward::primitive_desc pd;
    try {
      pd = dnnl::convolution_forward::primitive_desc(
          cpuEngine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, p->src,
          dnnl::memory::desc(weightDims(), f32, tag::any), bias_md_, p->dst, {stride_[0], stride_[1]},
          {dilation_[0] - 1, dilation_[1] - 1}, {padding_[0], padding_[1]}, {padding_[0], padding_[1]}, attr);
    } catch (const dnnl::error&) {
      return p;  // no kernel for this shape: ok stays false
    }
    p->prim = dnnl::convolution_forward(pd);
    p->scratch_bytes = pd.scratchpad_desc().get_size();
    p->weights = weights_->get(pd.weights_desc());
    p->ok = true;
    return p;
  }

  std::string chain_;
  bool nhwc_output_;
  std::vector<int64_t> stride_, padding_, dilation_;
  int64_t groups_ = 1, out_channels_ = 0, in_channels_ = 0, kh_ = 0, kw_ = 0;
  std::unique_ptr<PackedWeights> weights_;  // batch norm folded
  at::Tensor bias_;
  dnnl::memory::desc bias_md_;
  dnnl::memory bias_mem_;
  Unary unary_;
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

std::unique_ptr<CompiledPartition> compileConv(const FusionChain& chain, const Partition& p, bool nhwc_output) {
  return std::make_unique<FusedConv>(chain, p, nhwc_output);
}

}  // namespace brisk::onednn
