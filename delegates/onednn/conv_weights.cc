#include "delegates/onednn/conv_weights.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/graph/graph.h"
#include "delegates/onednn/dnnl_runtime.h"

namespace brisk::onednn {
namespace {

using tag = dnnl::memory::format_tag;

std::vector<int64_t> pair2(const Value* v, const char* what) {
  std::vector<int64_t> l = v->constant().toIntVector();
  if (l.size() == 1) l.push_back(l[0]);
  if (l.size() != 2) throw std::runtime_error(std::string("conv ") + what + " must have 1 or 2 values");
  return l;
}

at::Tensor constTensorOr(const Value* v, const at::Tensor& otherwise) {
  return v->constant().isNone() ? otherwise : v->constant().toTensor();
}

}  // namespace

ConvWeights::ConvWeights(const Node& conv, const Node* bn, const std::vector<const Value*>& releasable) {
  const auto& in = conv.inputs();
  at::Tensor w = in[1]->constant().toTensor();
  at::Tensor b = constTensorOr(in[2], at::Tensor());
  stride = pair2(in[3], "stride");
  padding = pair2(in[4], "padding");
  dilation = pair2(in[5], "dilation");
  groups = in[conv.key() == "aten::conv2d" ? 6 : 8]->constant().toInt();
  for (size_t i = 0; i < 2; ++i)
    if (stride[i] < 1 || dilation[i] < 1 || padding[i] < 0) throw std::runtime_error("bad conv geometry");
  if (groups < 1 || w.size(0) % groups != 0) throw std::runtime_error("bad conv groups");
  if (bn) {
    const auto& bi = bn->inputs();
    const double eps = bi[bn->key() == "aten::batch_norm" ? 7 : 6]->constant().toDouble();
    at::Tensor mean = bi[3]->constant().toTensor(), var = bi[4]->constant().toTensor();
    at::Tensor gamma = constTensorOr(bi[1], at::ones_like(mean)), beta = constTensorOr(bi[2], at::zeros_like(mean));
    at::Tensor scale = gamma / at::sqrt(var + eps);
    w = w * scale.reshape({-1, 1, 1, 1});
    b = ((b.defined() ? b : at::zeros_like(mean)) - mean) * scale + beta;
  }
  out_channels = w.size(0);
  in_channels = w.size(1) * groups;
  kh = w.size(2);
  kw = w.size(3);
  // A folded weight is the partition's own; the graph's may lose its bytes only when
  // nothing else reads them (delegate.h), and comes back exactly (no fold applied).
  const PackedWeights::Dense dense =
      bn ? PackedWeights::Dense::kOwned
         : std::find(releasable.begin(), releasable.end(), in[1]) != releasable.end() ? PackedWeights::Dense::kReleasable
                                                                                     : PackedWeights::Dense::kShared;
  weights = std::make_unique<PackedWeights>(
      w, dnnl::memory::desc(weightDims(), dnnl::memory::data_type::f32, groups > 1 ? tag::goihw : tag::oihw), dense);
  if (b.defined()) {
    if (b.numel() != out_channels) throw std::runtime_error("bias does not match the weight");
    bias = b.contiguous();
    bias_md = dnnl::memory::desc({out_channels}, dnnl::memory::data_type::f32, tag::a);
    bias_mem = dnnl::memory(bias_md, cpuEngine(), bias.data_ptr());
  }
}

int64_t ConvWeights::outSize(int64_t in, size_t d) const {
  const int64_t k = d == 0 ? kh : kw;
  return (in + 2 * padding[d] - dilation[d] * (k - 1) - 1) / stride[d] + 1;
}

dnnl::memory::dims ConvWeights::weightDims() const {
  return groups > 1 ? dnnl::memory::dims{groups, out_channels / groups, in_channels / groups, kh, kw}
                    : dnnl::memory::dims{out_channels, in_channels, kh, kw};
}

}  // namespace brisk::onednn
