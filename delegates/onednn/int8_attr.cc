#include "delegates/onednn/int8_attr.h"

#include <ATen/ATen.h>

#include "delegates/onednn/dnnl_runtime.h"
#include "delegates/onednn/post_ops.h"

namespace brisk::onednn {
namespace {

using tag = dnnl::memory::format_tag;

dnnl::memory constantMemory(const at::Tensor& t, dnnl::memory::data_type dt) {
  return dnnl::memory(dnnl::memory::desc({t.numel()}, dt, tag::a), cpuEngine(), t.data_ptr());
}

}  // namespace

Int8Attr::Int8Attr(const QuantizedChain& c, int weight_mask, bool zero_point_in_bias)
    : weight_mask_(weight_mask),
      src_zero_point_(c.x.zero_point != 0 && !zero_point_in_bias),
      quantized_(c.q != nullptr),
      dst_zero_point_(c.q != nullptr && c.y.zero_point != 0),
      other_(c.other),
      has_other_(c.dq_other != nullptr),
      unary_(c.body.unary) {
  // The source's scale times each channel's, computed in double and rounded once.
  weight_scales_ = (c.weight_scales.to(at::kDouble) * c.x.scale).to(at::kFloat).contiguous();
  src_zp_ = at::full({1}, c.x.zero_point, at::kInt);
  dst_scale_ = at::full({1}, c.y.scale, at::kFloat);
  dst_zp_ = at::full({1}, c.y.zero_point, at::kInt);
  weight_scales_mem_ = constantMemory(weight_scales_, dnnl::memory::data_type::f32);
  src_zp_mem_ = constantMemory(src_zp_, dnnl::memory::data_type::s32);
  dst_scale_mem_ = constantMemory(dst_scale_, dnnl::memory::data_type::f32);
  dst_zp_mem_ = constantMemory(dst_zp_, dnnl::memory::data_type::s32);
  dnnl::post_ops check;
  appendUnary(check, unary_);  // now: an op oneDNN lacks fails the compile, not a call
}

at::Tensor Int8Attr::biasWithZeroPointInDouble(const QuantizedChain& c, const at::Tensor& bias) {
  const at::Tensor w = c.weight.to(at::kDouble).flatten(1).sum(1);
  const at::Tensor shift = c.weight_scales.to(at::kDouble) * c.x.scale * static_cast<double>(c.x.zero_point) * w;
  return bias.defined() ? bias.to(at::kDouble) - shift : -shift;
}

at::Tensor Int8Attr::biasWithZeroPoint(const QuantizedChain& c, const at::Tensor& bias) {
  return biasWithZeroPointInDouble(c, bias).to(at::kFloat).contiguous();
}

dnnl::primitive_attr Int8Attr::attr(const dnnl::memory::desc* other) const {
  dnnl::primitive_attr attr;
  attr.set_scales_mask(DNNL_ARG_WEIGHTS, weight_mask_);
  if (src_zero_point_) attr.set_zero_points_mask(DNNL_ARG_SRC, 0);
  if (quantized_) {
    attr.set_scales_mask(DNNL_ARG_DST, 0);
    if (dst_zero_point_) attr.set_zero_points_mask(DNNL_ARG_DST, 0);
  }
  dnnl::post_ops ops;
  if (has_other_ && other) {
    // result + (oq - zp_o) * s_o, as s_o * (result / s_o - zp_o + oq): oneDNN's binary
    // post-op adds its operand as it is, so the residual's quantization goes around it.
    ops.append_eltwise(dnnl::algorithm::eltwise_linear, static_cast<float>(1.0 / other_.scale),
                       static_cast<float>(-other_.zero_point));
    ops.append_binary(dnnl::algorithm::binary_add, *other);
    ops.append_eltwise(dnnl::algorithm::eltwise_linear, static_cast<float>(other_.scale), 0.f);
  }
  appendUnary(ops, unary_);
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

int Int8Attr::appendArgs(dnnl_exec_arg_t* args) const {
  int n = 0;
  args[n++] = {DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS, weight_scales_mem_.get()};
  if (src_zero_point_) args[n++] = {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, src_zp_mem_.get()};
  if (quantized_) {
    args[n++] = {DNNL_ARG_ATTR_SCALES | DNNL_ARG_DST, dst_scale_mem_.get()};
    if (dst_zero_point_) args[n++] = {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, dst_zp_mem_.get()};
  }
  return n;
}

}  // namespace brisk::onednn
