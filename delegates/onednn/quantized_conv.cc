// A PT2E quantized convolution chain (quantized_chain.h) as one oneDNN int8 convolution:
// uint8 source with its zero point, int8 weight with per-channel scales packed once per
// blocking oneDNN asks for, fp32 bias, the chain's post-ops (int8_attr.h), and a uint8
// result (or fp32 where the program leaves it unquantized).
//
// Activations pass between such partitions as uint8 NHWC, which oneDNN's int8 kernels
// read and write without reordering: a uint8 NCHW source (a quantized model input) is
// reordered once at the edge, and the result is reordered to NCHW only when a reader
// needs that order. A quantize / dequantize outside a partition keeps its input's layout,
// so the readers PT2E puts there (a pooling's dequantize) take NHWC as it is.
//
// A 3x3 depthwise chain that closes with a quantize runs brisk's own VNNI kernel
// (ops_cpu/simd/depthwise_int8_nhwc.h) instead, on the same NHWC tensors and edge
// reorders: over mobilenet_v2's 17 depthwise layers at batch 8 it takes 4.2 ms where
// oneDNN 3.2's fastest takes 7.6 (AVX-512 VNNI, one thread).
//
// Per input shape (shape_cache.h) the partition builds the primitive once; a call only
// points memory objects at the tensors and executes (dnnl_runtime.h).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>
#include <vector>

#include "core/graph/graph.h"
#include "delegates/onednn/conv_weights.h"
#include "delegates/onednn/dnnl_runtime.h"
#include "delegates/onednn/folded_float_weight.h"
#include "delegates/onednn/fused_ops.h"
#include "delegates/onednn/impl_timing.h"
#include "delegates/onednn/int8_attr.h"
#include "delegates/onednn/quantized_ops.h"
#include "delegates/onednn/shape_cache.h"
#include "ops_cpu/simd/depthwise_int8_nhwc.h"

namespace brisk::onednn {
namespace {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;
namespace simd = brisk::ops_cpu::out;

struct Int8ConvPlan {
  bool ok = false;
  bool own = false;  // brisk's depthwise kernel computes `dst` (no primitive)
  simd::WindowDim h, w;  // its geometry
  dnnl::convolution_forward prim;
  dnnl::memory weights;  // the int8 weight in the blocking this primitive chose
  dnnl::memory::desc src, dst, other;
  bool reorder_src = false;  // the source arrives NCHW: reordered into `src`
  dnnl::memory::desc src_nchw;
  // A padded NCHW source with a zero point: reordered into the interior (`src_view`) of
  // a `src` that holds the padding too, filled with the zero point (see padded_attr_).
  bool padded = false;
  dnnl::memory::desc src_view;
  const Int8Attr* attr = nullptr;         // the attributes and bias the primitive was made with
  const dnnl::memory* bias = nullptr;
  dnnl::reorder to_src;
  std::optional<dnnl::memory::desc> out;  // the result as NCHW readers take it
  dnnl::reorder to_out;
  size_t scratch_bytes = 0;
  std::string impl;
  std::vector<double> timed;  // seconds per candidate when autotuned: oneDNN's first, jit_int8
};

struct BoundInt8Conv {
  const Int8ConvPlan* plan = nullptr;
  dnnl::memory src, src_nchw, src_view, dst, other, out, scratch;
};

struct Int8ConvState final : DnnlState {
  std::array<BoundInt8Conv, ShapeCache<Int8ConvPlan>::kSlots + 1> bound;
  std::unique_ptr<const Int8ConvPlan> overflow;
};

class QuantizedConv final : public CompiledPartition {
 public:
  QuantizedConv(const QuantizedChain& c, const Partition& partition, bool nhwc_output, const Int8ConvOptions& options)
      : chain_(c.str()),
        autotune_(options.autotune),
        nhwc_output_(nhwc_output),
        out_type_(c.q ? at::kByte : at::kFloat),
        conv_(*c.body.nodes[0], nullptr, {}),
        attr_(c, weightMask(conv_), zeroPointInBias(c, conv_)),
        float_weight_(c.float_weight, *c.folded, isReleasable(partition, c.float_weight)) {
    if (options.own_depthwise) own_ = ownDepthwise(c);  // before the zero point goes into the bias: it folds its own
    if (c.x.zero_point != 0 && !zeroPointInBias(c, conv_) && !own_) {
      padded_attr_.emplace(c, weightMask(conv_), true);
      padded_bias_ = Int8Attr::biasWithZeroPoint(c, conv_.bias);
      padded_zero_point_ = c.x.zero_point;
      padded_bias_mem_ = dnnl::memory(dnnl::memory::desc({conv_.out_channels}, dt::f32, tag::a), cpuEngine(),
                                      padded_bias_.data_ptr());
    }
    if (zeroPointInBias(c, conv_)) {
      conv_.bias = Int8Attr::biasWithZeroPoint(c, conv_.bias);
      conv_.bias_md = dnnl::memory::desc({conv_.out_channels}, dt::f32, tag::a);
      conv_.bias_mem = dnnl::memory(conv_.bias_md, cpuEngine(), conv_.bias.data_ptr());
    }
    // The partition packs the program's own integers; the graph's float weight is the
    // nested block's (float_weight_).
    conv_.weights = std::make_unique<PackedWeights>(
        c.weight, dnnl::memory::desc(conv_.weightDims(), dt::s8, conv_.groups > 1 ? tag::goihw : tag::oihw),
        PackedWeights::Dense::kShared);
    x_input_ = inputIndex(partition.node, c.dq_x->input(0));
    if (c.dq_other) other_input_ = static_cast<int>(inputIndex(partition.node, c.dq_other->input(0)));
    plans_ = std::make_unique<ShapeCache<Int8ConvPlan>>([this](c10::IntArrayRef x) { return plan(x); });
  }

  std::unique_ptr<KernelState> newState() const override { return std::make_unique<Int8ConvState>(); }
  bool run(KernelContext& ctx, KernelState* state) const override {
    if (serve(ctx, *static_cast<Int8ConvState*>(state))) return true;
    float_weight_.restore();  // the nested block runs the program's float ops next
    return false;
  }
  std::string describe() const override {
    std::ostringstream os;
    os << chain_ << " " << conv_.kh << "x" << conv_.kw << " " << conv_.in_channels << "->" << conv_.out_channels;
    if (conv_.groups > 1) os << " groups " << conv_.groups;
    if (conv_.stride[0] > 1) os << " stride " << conv_.stride[0];
    os << (own_ ? " (brisk int8 depthwise in nhwc, " : " (oneDNN int8 convolution in nhwc, ") << plans_->shapes() << " input shapes prepared so far"
       << (float_weight_.released() ? ", float weight freed" : "");
    const Int8ConvPlan* first = firstPlan();
    if (first) os << ", kernel " << first->impl;
    if (first && first->timed.size() == 2)
      os << " (timed: oneDNN's first " << first->timed[0] * 1e6 << " us, jit_int8 " << first->timed[1] * 1e6 << " us)";
    os << ")";
    return os.str();
  }
  std::vector<std::string> edgeConversions() const override {
    return {"input: uint8 nhwc as it is, uint8 nchw reordered",
            std::string("output: ") + (out_type_ == at::kByte ? "uint8" : "fp32") + (nhwc_output_ ? " nhwc" : " nhwc -> nchw")};
  }
  bool outputPlannable() const override { return true; }

 private:
  // oneDNN's scale mask over the weight dims that index an output channel: with a
  // leading group dim for grouped convolutions (ConvWeights::weightDims).
  static int weightMask(const ConvWeights& w) { return w.groups > 1 ? 0b11 : 0b1; }

  // No window of an unpadded convolution reaches into padding (Int8Attr::biasWithZeroPoint).
  static bool zeroPointInBias(const QuantizedChain& c, const ConvWeights& w) {
    return c.x.zero_point != 0 && w.padding[0] == 0 && w.padding[1] == 0;
  }

  // The first shape's plan that runs int8, or null.
  const Int8ConvPlan* firstPlan() const {
    const Int8ConvPlan* first = nullptr;
    plans_->count([&](const Int8ConvPlan& p) {
      if (!first && p.ok) first = &p;
      return false;
    });
    return first;
  }

  static bool uint8Image(const at::Tensor& t) {
    return t.scalar_type() == at::kByte && t.layout() == at::kStrided && t.is_cpu() && t.dim() == 4;
  }
  static bool nhwc(const at::Tensor& t) { return t.is_contiguous(at::MemoryFormat::ChannelsLast); }

  bool serve(KernelContext& ctx, Int8ConvState& st) const {
    const at::Tensor& x = ctx.tensor(x_input_);
    if (!uint8Image(x) || x.size(1) != conv_.in_channels || x.numel() == 0) return false;
    const bool x_nhwc = nhwc(x);
    if (!x_nhwc && !x.is_contiguous()) return false;
    const int64_t oh = conv_.outSize(x.size(2), 0), ow = conv_.outSize(x.size(3), 1);
    if (oh < 1 || ow < 1) return false;
    const std::array<int64_t, 4> out{x.size(0), conv_.out_channels, oh, ow};
    at::Tensor other;
    if (other_input_ >= 0) {
      const at::Tensor& o = ctx.tensor(other_input_);
      if (!uint8Image(o) || !o.sizes().equals(out)) return false;  // a broadcasting add: the nested block
      other = nhwc(o) ? o : o.contiguous(at::MemoryFormat::ChannelsLast);
    }
    // The key says how the source arrives: its sizes, and a fifth entry for NCHW.
    const std::array<int64_t, 5> key{x.size(0), x.size(1), x.size(2), x.size(3), x_nhwc ? 0 : 1};
    size_t slot = 0;
    const Int8ConvPlan& p = plans_->get(key, st.overflow, &slot);
    if (!p.ok) return false;
    BoundInt8Conv& b = st.bound[slot];
    if (b.plan != &p || slot == ShapeCache<Int8ConvPlan>::kSlots) bind(b, p);
    at::Tensor src;
    if (p.reorder_src) {
      src = bufferFor(p.src, x);
      b.src_nchw.set_data_handle(x.data_ptr());
      b.src.set_data_handle(src.data_ptr());
      if (p.padded) {
        fillPadding(static_cast<uint8_t*>(src.data_ptr()), x);
        b.src_view.set_data_handle(src.data_ptr());
        st.reorder(p.to_src, b.src_nchw, b.src_view);
      } else {
        st.reorder(p.to_src, b.src_nchw, b.src);
      }
    } else {
      b.src.set_data_handle(x.data_ptr());
    }
    const at::TensorOptions y_options = x.options().dtype(out_type_);
    at::Tensor y = nhwc_output_ ? at::empty(out, y_options.memory_format(at::MemoryFormat::ChannelsLast))
                                : at::empty(out, y_options);
    const at::Tensor computed = p.out ? bufferFor(p.dst, x) : y;
    b.dst.set_data_handle(computed.data_ptr());
    if (p.own) {
      runOwn(p, static_cast<const uint8_t*>(b.src.get_data_handle()), static_cast<uint8_t*>(computed.data_ptr()), x);
    } else {
      execute(p, b, st, x, other);
    }
    if (p.out) {
      b.out.set_data_handle(y.data_ptr());
      st.reorder(p.to_out, b.dst, b.out);
    }
    ctx.output(0) = std::move(y);
    return true;
  }

  // The oneDNN primitive on the bound memories.
  void execute(const Int8ConvPlan& p, BoundInt8Conv& b, Int8ConvState& st, const at::Tensor& x,
               const at::Tensor& other) const {
    at::Tensor scratch = scratchFor(p.scratch_bytes, x);
    dnnl_exec_arg_t args[12];
    int n = 0;
    args[n++] = {DNNL_ARG_SRC, b.src.get()};
    args[n++] = {DNNL_ARG_WEIGHTS, p.weights.get()};
    args[n++] = {DNNL_ARG_DST, b.dst.get()};
    if (p.bias->get(true) != nullptr) args[n++] = {DNNL_ARG_BIAS, p.bias->get()};
    if (scratch.defined()) {
      b.scratch.set_data_handle(scratch.data_ptr());
      args[n++] = {DNNL_ARG_SCRATCHPAD, b.scratch.get()};
    }
    if (other.defined()) {
      b.other.set_data_handle(other.data_ptr());
      args[n++] = {Int8Attr::otherArg(), b.other.get()};
    }
    n += p.attr->appendArgs(args + n);
    st.execute(p.prim, args, n);
  }

  // The padding rows and columns of a padded NHWC source for `x` (NCHW) hold the source's
  // zero point: a real 0, as the program's padding is.
  void fillPadding(uint8_t* buf, const at::Tensor& x) const {
    const int64_t ph = conv_.padding[0], pw = conv_.padding[1], c = x.size(1);
    const int64_t hp = x.size(2) + 2 * ph, row = (x.size(3) + 2 * pw) * c;
    const auto zp = static_cast<uint8_t>(padded_zero_point_);
    for (int64_t n = 0; n < x.size(0); ++n) {
      uint8_t* image = buf + n * hp * row;
      std::memset(image, zp, static_cast<size_t>(ph * row));
      std::memset(image + (hp - ph) * row, zp, static_cast<size_t>(ph * row));
      for (int64_t y = ph; y < hp - ph; ++y) {
        std::memset(image + y * row, zp, static_cast<size_t>(pw * c));
        std::memset(image + (y + 1) * row - pw * c, zp, static_cast<size_t>(pw * c));
      }
    }
  }

  // Rows of the output split over libtorch's intra-op threads, each with its own
  // interleave buffer from one scratch tensor.
  void runOwn(const Int8ConvPlan& p, const uint8_t* src, uint8_t* dst, const at::Tensor& like) const {
    const size_t per_thread = (simd::DepthwiseInt8::scratchBytes(p.w) + 63) / 64 * 64;
    const int64_t threads = at::get_num_threads();
    const at::Tensor scratch = scratchFor(per_thread * static_cast<size_t>(threads) + 64, like);
    auto* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(scratch.data_ptr()) + 63) & ~uintptr_t{63});
    const int64_t rows = p.h.out * like.size(0);
    // About 1024 block-outputs (64 channels of one pixel, ~25 cycles each) per task.
    const int64_t grain = std::max<int64_t>(1, 1024 / std::max<int64_t>(1, p.w.out * conv_.out_channels / 64));
    at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
      own_->run(src, dst, begin, end, p.h, p.w, base + per_thread * static_cast<size_t>(at::get_thread_num()));
    });
  }

  static void bind(BoundInt8Conv& b, const Int8ConvPlan& p) {
    b.plan = &p;
    b.src = unboundMemory(p.src);
    b.dst = unboundMemory(p.dst);
    b.other = unboundMemory(p.other);
    if (p.reorder_src) b.src_nchw = unboundMemory(p.src_nchw);
    if (p.padded) b.src_view = unboundMemory(p.src_view);
    if (p.out) b.out = unboundMemory(*p.out);
    if (p.scratch_bytes) b.scratch = unboundScratchpad(p.scratch_bytes);
  }

  // Built on a Runtime's first call with source sizes `key` (and arrival order), kept
  // for the Module's life. oneDNN computes in NHWC (its int8 kernels' layout).
  std::unique_ptr<Int8ConvPlan> plan(c10::IntArrayRef key) const {
    auto p = std::make_unique<Int8ConvPlan>();
    const dims src{key[0], key[1], key[2], key[3]};
    const dims dst{key[0], conv_.out_channels, conv_.outSize(key[2], 0), conv_.outSize(key[3], 1)};
    const auto ydt = out_type_ == at::kByte ? dt::u8 : dt::f32;
    p->src = dnnl::memory::desc(src, dt::u8, tag::nhwc);
    p->dst = dnnl::memory::desc(dst, ydt, tag::nhwc);
    p->other = dnnl::memory::desc(dst, dt::u8, tag::nhwc);
    p->attr = &attr_;
    p->bias = &conv_.bias_mem;
    std::array<int64_t, 2> pad{conv_.padding[0], conv_.padding[1]};
    if (key[4] == 1) {
      p->reorder_src = true;
      p->src_nchw = dnnl::memory::desc(src, dt::u8, tag::nchw);
      if (padded_attr_) {
        // The padding becomes data (the zero point), so no window reaches padding and the
        // zero point goes into the bias: oneDNN's per-call compensation pass for a source
        // zero point is gone (resnet18's 7x7 stem at b8: 4840 -> 4390 us standalone).
        p->padded = true;
        p->src = dnnl::memory::desc({key[0], key[1], key[2] + 2 * pad[0], key[3] + 2 * pad[1]}, dt::u8, tag::nhwc);
        p->src_view = p->src.submemory_desc(src, {0, 0, pad[0], pad[1]});
        p->attr = &*padded_attr_;
        p->bias = &padded_bias_mem_;
        pad = {0, 0};
      }
      p->to_src = dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), p->src_nchw, cpuEngine(),
                                                              p->padded ? p->src_view : p->src));
    }
    if (!nhwc_output_) {
      p->out = dnnl::memory::desc(dst, ydt, tag::nchw);
      p->to_out = dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), p->dst, cpuEngine(), *p->out));
    }
    if (own_) {
      p->h = windowDim(key[2], 0);
      p->w = windowDim(key[3], 1);
      if (simd::DepthwiseInt8::supports(p->h, p->w)) {
        p->own = p->ok = true;
        p->impl = "brisk_dw3x3_int8:avx512_vnni";
        return p;
      }
    }
    try {
      auto make = [&] {
        return dnnl::convolution_forward::primitive_desc(
            cpuEngine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, p->src,
            dnnl::memory::desc(conv_.weightDims(), dt::s8, tag::any),
            p->bias->get(true) != nullptr ? p->bias->get_desc() : dnnl::memory::desc(), p->dst,
            {conv_.stride[0], conv_.stride[1]}, {conv_.dilation[0] - 1, conv_.dilation[1] - 1},
            {pad[0], pad[1]}, {pad[0], pad[1]}, p->attr->attr(other_input_ >= 0 ? &p->other : nullptr));
      };
      dnnl::convolution_forward::primitive_desc pd = make();
      if (autotune_) {
        // oneDNN's first choice against its direct kernel, where that is another one.
        dnnl::convolution_forward::primitive_desc direct = make();
        if (advanceTo(direct, "jit_int8") && std::string(direct.impl_info_str()) != pd.impl_info_str()) {
          std::vector<dnnl_exec_arg_t> constants(8);
          constants.resize(static_cast<size_t>(p->attr->appendArgs(constants.data())));
          const dnnl::memory::desc* other = other_input_ >= 0 ? &p->other : nullptr;
          const double first = timeConvolution(pd, constants, other, Int8Attr::otherArg());
          const double second = timeConvolution(direct, constants, other, Int8Attr::otherArg());
          p->timed = {first, second};
          if (second < first) pd = direct;
        }
      } else if (directDepthwise()) {
        // A second descriptor to walk: copies share oneDNN's handle and its position.
        dnnl::convolution_forward::primitive_desc direct = make();
        if (advanceTo(direct, "jit_int8")) pd = direct;
      }
      p->impl = pd.impl_info_str();
      p->prim = dnnl::convolution_forward(pd);
      p->weights = conv_.weights->get(pd.weights_desc());
      p->scratch_bytes = pd.scratchpad_desc().get_size();
      p->ok = true;
    } catch (const dnnl::error&) {
      // No int8 kernel for this shape: the nested block runs (ok stays false).
    }
    return p;
  }

  simd::WindowDim windowDim(int64_t in, size_t d) const {
    simd::WindowDim w;
    w.in = in;
    w.out = conv_.outSize(in, d);
    w.kernel = d == 0 ? conv_.kh : conv_.kw;
    w.stride = conv_.stride[d];
    w.pad = conv_.padding[d];
    w.dilation = conv_.dilation[d];
    return w;
  }

  // brisk's depthwise kernel for this chain, or null where it does not apply: a 3x3
  // depthwise convolution (one channel per group) whose chain has no residual add,
  // closes with a quantize, and has no activation but a clamp (relu, hardtanh), on a CPU
  // with AVX-512 VNNI. The geometry (stride, padding) is checked per shape in plan().
  std::unique_ptr<simd::DepthwiseInt8> ownDepthwise(const QuantizedChain& c) const {
    const bool depthwise = conv_.groups > 1 && conv_.groups == conv_.in_channels && conv_.groups == conv_.out_channels;
    const Unary& u = c.body.unary;
    const bool clamp = u.attr == "none" || (u.attr == "relu" && u.scalars.empty()) ||
                       (u.attr == "hardtanh" && u.scalars.size() == 2 && u.scalars[0] <= u.scalars[1]);
    if (!depthwise || conv_.kh != 3 || conv_.kw != 3 || c.dq_other || !c.q || !clamp || !simd::depthwiseInt8Available())
      return nullptr;
    // q = round(acc * s_x * s_w[c] / s_y + (bias[c] - s_x * s_w[c] * zp_x * sum(w[c])) / s_y + zp_y),
    // computed in double and rounded to fp32 once per channel.
    const int64_t channels = conv_.out_channels;
    const at::Tensor w = c.weight.contiguous();
    const at::Tensor scale = (c.weight_scales.to(at::kDouble) * c.x.scale / c.y.scale).to(at::kFloat).contiguous();
    const at::Tensor shift = (Int8Attr::biasWithZeroPointInDouble(c, conv_.bias) / c.y.scale +
                              static_cast<double>(c.y.zero_point))
                                 .to(at::kFloat)
                                 .contiguous();
    if (w.scalar_type() != at::kChar || w.numel() != channels * 9 ||
        !simd::DepthwiseInt8::fitsInt32(scale.data_ptr<float>(), shift.data_ptr<float>(), channels))
      return nullptr;
    // The activation's clamp in the quantized domain: rounding is monotonic, so rounding
    // the clamped value equals clamping the rounded one to the rounded bounds.
    auto quantized = [&](double real) {
      return static_cast<uint8_t>(std::clamp(std::nearbyint(real / c.y.scale + static_cast<double>(c.y.zero_point)), 0.0, 255.0));
    };
    uint8_t lo = 0, hi = 255;
    if (u.attr == "relu") lo = quantized(0.0);
    if (u.attr == "hardtanh") {
      lo = quantized(u.scalars[0]);
      hi = quantized(u.scalars[1]);
    }
    return std::make_unique<simd::DepthwiseInt8>(w.data_ptr<int8_t>(), scale.data_ptr<float>(), shift.data_ptr<float>(),
                                                 channels, static_cast<uint8_t>(c.x.zero_point), lo, hi);
  }

  // Without autotuning: a stride-1 depthwise convolution. oneDNN 3.2 ranks its brgemm kernel (brdgmm_dw)
  // first; its direct kernel (jit_int8) measured 9% faster over mobilenet_v2's
  // stride-1 depthwise layers at batch 8 (AVX-512 VNNI, one thread), and no faster at
  // stride 2.
  bool directDepthwise() const {
    return conv_.groups > 1 && conv_.groups == conv_.in_channels && conv_.groups == conv_.out_channels &&
           conv_.stride[0] == 1 && conv_.stride[1] == 1;
  }
  // Moves `pd` to its first implementation whose name starts with `prefix`; false (and
  // `pd` spent) when oneDNN has none for this shape and machine.
  static bool advanceTo(dnnl::convolution_forward::primitive_desc& pd, const char* prefix) {
    do {
      if (std::string(pd.impl_info_str()).rfind(prefix, 0) == 0) return true;
    } while (pd.next_impl());
    return false;
  }

  std::string chain_;
  bool autotune_;
  bool nhwc_output_;
  at::ScalarType out_type_;
  ConvWeights conv_;  // geometry and bias; `weights` holds the int8 weight
  Int8Attr attr_;
  mutable FoldedFloatWeight float_weight_;
  std::unique_ptr<simd::DepthwiseInt8> own_;  // brisk's kernel, where it applies
  // For an NCHW source of a padded convolution with a source zero point: the attributes
  // and bias with the zero point folded in (Int8Attr::biasWithZeroPoint), used with the
  // padding materialized (Int8ConvPlan::padded).
  std::optional<Int8Attr> padded_attr_;
  at::Tensor padded_bias_;
  dnnl::memory padded_bias_mem_;
  int64_t padded_zero_point_ = 0;
  size_t x_input_ = 0;
  int other_input_ = -1;
  std::unique_ptr<ShapeCache<Int8ConvPlan>> plans_;
};

}  // namespace

std::unique_ptr<CompiledPartition> compileQuantizedConv(const QuantizedChain& chain, const Partition& p,
                                                        bool nhwc_output, const Int8ConvOptions& options) {
  return std::make_unique<QuantizedConv>(chain, p, nhwc_output, options);
}

}  // namespace brisk::onednn
