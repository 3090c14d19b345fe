// A convolution chain as one oneDNN call: mkldnn::_convolution_pointwise (conv + bias +
// one eltwise post-op) or its .binary form (conv + bias + add of another tensor + relu).
// Batch norm is folded into the weight and bias here. Activations flow in channels-last
// (NHWC) order, which oneDNN's convolutions read and write without reordering: an NCHW
// input is converted once at the partition's edge, and the result stays NHWC unless a
// reader needs NCHW.
#include <ATen/ATen.h>

#include <sstream>
#include <stdexcept>

#include "core/graph/graph.h"
#include "delegates/onednn/fused_ops.h"
#include "core/kernels/output_capture.h"
#include "delegates/onednn/mkldnn_ops.h"
#include "delegates/onednn/packed_weights.h"

namespace brisk::onednn {
namespace {

std::vector<int64_t> pair2(const Value* v, const char* what) {
  std::vector<int64_t> l = v->constant().toIntVector();
  if (l.size() == 1) l.push_back(l[0]);
  if (l.size() != 2) throw std::runtime_error(std::string("conv ") + what + " must have 1 or 2 values");
  return l;
}

at::Tensor constTensorOr(const Value* v, const at::Tensor& otherwise) {
  return v->constant().isNone() ? otherwise : v->constant().toTensor();
}

class FusedConv final : public CompiledPartition {
 public:
  FusedConv(const FusionChain& c, const Node& node, bool nhwc_output) : chain_(c.str()), nhwc_output_(nhwc_output) {
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
    static const c10::OperatorHandle reorder = mkldnnOp("mkldnn::_reorder_convolution_weight", "");
    weights_ = std::make_unique<PackedWeightCache>(
        [w = w.contiguous(), p = padding_, st = stride_, d = dilation_, g = groups_](c10::IntArrayRef input) {
          // Packed once per shape and kept: not the call's scratch, not in the slab.
          UnplannedAllocations outside_plan;
          torch::jit::Stack s{w, p, st, d, g, input.vec()};
          return c10::IValue(callOne(reorder, s));
        });
    bias_ = b.defined() ? c10::IValue(b.contiguous()) : c10::IValue();
    x_input_ = inputIndex(node, conv.input(0));
    if (c.add) {
      op_ = mkldnnOp("mkldnn::_convolution_pointwise", "binary");
      other_input_ = static_cast<int>(inputIndex(node, c.add->input(c.add_other)));
    } else {
      op_ = mkldnnOp("mkldnn::_convolution_pointwise", "");
    }
    attr_ = c.unary.attr;
    padding_iv_ = padding_;
    stride_iv_ = stride_;
    dilation_iv_ = dilation_;
    groups_iv_ = groups_;
    unary_iv_ = c.add && attr_ == "none" ? c10::IValue() : c10::IValue(attr_);
    scalars_ = unaryScalars(c.unary.scalars);
    algorithm_ = optionalString(c.unary.algorithm);
  }

  std::unique_ptr<KernelState> newState() const override { return std::make_unique<CallState>(); }

  bool run(KernelContext& ctx, KernelState* state) const override {
    const at::Tensor& x0 = ctx.tensor(x_input_);
    if (x0.dim() != 4 || x0.scalar_type() != at::kFloat || x0.layout() != at::kStrided || !x0.is_cpu() ||
        x0.size(1) != in_channels_ || x0.numel() == 0)
      return false;
    const int64_t oh = outSize(x0.size(2), 0), ow = outSize(x0.size(3), 1);
    if (oh < 1 || ow < 1) return false;
    const at::Tensor x = x0.is_contiguous(at::MemoryFormat::ChannelsLast) ? x0 : x0.contiguous(at::MemoryFormat::ChannelsLast);
    torch::jit::Stack& s = static_cast<CallState*>(state)->stack;
    s.emplace_back(x);
    if (other_input_ >= 0) {
      const at::Tensor& other = ctx.tensor(other_input_);
      if (other.scalar_type() != at::kFloat || other.dim() != 4 || other.size(0) != x.size(0) ||
          other.size(1) != out_channels_ || other.size(2) != oh || other.size(3) != ow) {
        s.clear();
        return false;  // a broadcasting add: brisk's kernels
      }
      s.emplace_back(other);
    }
    s.emplace_back(weights_->get(x.sizes(), static_cast<CallState*>(state)->overflow));
    s.emplace_back(bias_);
    // Copies of prepared IValues: reference counts, no allocation.
    s.emplace_back(padding_iv_);
    s.emplace_back(stride_iv_);
    s.emplace_back(dilation_iv_);
    s.emplace_back(groups_iv_);
    if (other_input_ >= 0) {
      s.emplace_back(binary_attr_);
      s.emplace_back();  // alpha
    }
    s.emplace_back(unary_iv_);
    s.emplace_back(scalars_);
    s.emplace_back(algorithm_);
    at::Tensor y = callOne(op_, s);
    ctx.output(0) = nhwc_output_ ? std::move(y) : y.contiguous();
    return true;
  }

  std::string describe() const override {
    std::ostringstream os;
    os << chain_ << " " << kh_ << "x" << kw_ << " " << in_channels_ << "->" << out_channels_;
    if (groups_ > 1) os << " groups " << groups_;
    if (stride_[0] > 1 || stride_[1] > 1) os << " stride " << stride_[0];
    return os.str() + " (mkldnn::_convolution_pointwise, weight packed per input shape: " +
           std::to_string(weights_->shapes()) + " so far)";
  }
  std::vector<std::string> edgeConversions() const override {
    std::vector<std::string> c{"input: to nhwc unless already nhwc"};
    c.push_back(nhwc_output_ ? "output: nhwc" : "output: nhwc -> nchw");
    return c;
  }
  bool outputPlannable() const override { return true; }

 private:
  int64_t outSize(int64_t in, size_t d) const {
    const int64_t k = d == 0 ? kh_ : kw_;
    return (in + 2 * padding_[d] - dilation_[d] * (k - 1) - 1) / stride_[d] + 1;
  }

  std::string chain_;
  bool nhwc_output_;
  c10::OperatorHandle op_ = mkldnnOp("mkldnn::_convolution_pointwise", "");
  std::vector<int64_t> stride_, padding_, dilation_;
  int64_t groups_ = 1, out_channels_ = 0, in_channels_ = 0, kh_ = 0, kw_ = 0;
  std::unique_ptr<PackedWeightCache> weights_;
  c10::IValue bias_, padding_iv_, stride_iv_, dilation_iv_, groups_iv_, unary_iv_;
  size_t x_input_ = 0;
  int other_input_ = -1;
  std::string attr_;
  const c10::IValue binary_attr_{std::string("add")};
  c10::IValue scalars_, algorithm_;
};

}  // namespace

size_t inputIndex(const Node& node, const Value* v) {
  for (size_t i = 0; i < node.inputs().size(); ++i)
    if (node.input(i) == v) return i;
  throw std::runtime_error(v->ref() + " is not an input of the partition");
}

std::unique_ptr<CompiledPartition> compileConv(const FusionChain& chain, const Node& node, bool nhwc_output) {
  return std::make_unique<FusedConv>(chain, node, nhwc_output);
}

}  // namespace brisk::onednn
