#pragma once
// What turns a oneDNN convolution or matmul into a PT2E quantized chain's arithmetic
// (quantized_chain.h): scales and zero points as primitive attributes, the memories the
// call reads them from, and the post-ops.
//
//   real source   = (xq - zp_x) * s_x           source zero point zp_x
//   real weight   = wq * s_w[c]                  weight scales s_x * s_w[c] (the source's
//                                                scale folded in: one scale per channel)
//   result        = conv(real source, real weight) + bias, then the post-ops
//   residual add  = result + (oq - zp_o) * s_o   eltwise linear (1/s_o, -zp_o), binary add
//                                                of oq as it is, eltwise linear (s_o)
//   quantized     = round(result / s_y) + zp_y   destination scale and zero point,
//                                                saturated to 0..255 (PT2E's clamp)
//
// oneDNN adds the fp32 bias after the scales, and rounds to nearest even as torch.round
// does. It accumulates in int32, exactly, where the program's float convolution rounds,
// so a value at a rounding boundary of the result may land one step away.
#include <oneapi/dnnl/dnnl.hpp>
#include <ATen/core/Tensor.h>

#include "delegates/onednn/quantized_chain.h"

namespace brisk::onednn {

class Int8Attr {
 public:
  // `weight_mask`: the weight dims that index its output channel (oneDNN's scale mask).
  // `zero_point_in_bias`: the source's zero point is folded into the bias
  // (biasWithZeroPoint), so oneDNN is not given one.
  Int8Attr(const QuantizedChain& c, int weight_mask, bool zero_point_in_bias);
  // The bias that takes the source's zero point zp_x in: sum((xq - zp_x) * wq) is
  // sum(xq * wq) - zp_x * sum(wq) per output channel, so bias - s_x * s_w[c] * zp_x *
  // sum(wq[c]). Exact only where no window reaches into padding (a padded tap is
  // zp_x, not 0, in the program): a convolution without padding, a linear layer. oneDNN
  // given the zero point instead runs a compensation pass in every call (mobilenet_v2's
  // 16 -> 96 1x1 convolution at 112x112, batch 8: 2.27 -> 1.84 ms). `bias` may be
  // undefined (none).
  static at::Tensor biasWithZeroPoint(const QuantizedChain& c, const at::Tensor& bias);
  // The same in double, before the one rounding to fp32 (for kernels that fold further
  // terms into it first).
  static at::Tensor biasWithZeroPointInDouble(const QuantizedChain& c, const at::Tensor& bias);
  // The attributes, with `other` the residual's description when the chain adds one.
  dnnl::primitive_attr attr(const dnnl::memory::desc* other) const;
  // Appends the scale and zero-point arguments; returns how many.
  int appendArgs(dnnl_exec_arg_t* args) const;
  // The binary post-op's argument slot for the residual operand.
  static int otherArg() { return DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1; }
  bool quantizedOutput() const { return quantized_; }

 private:
  int weight_mask_;
  bool src_zero_point_;  // nonzero: oneDNN then adds a compensation pass, so 0 is left out
  bool quantized_;
  bool dst_zero_point_;  // nonzero: left out when 0, which lets oneDNN pick brdgmm for depthwise
  QuantParams other_;
  bool has_other_;
  Unary unary_;
  at::Tensor weight_scales_, src_zp_, dst_scale_, dst_zp_;
  dnnl::memory weight_scales_mem_, src_zp_mem_, dst_scale_mem_, dst_zp_mem_;
};

}  // namespace brisk::onednn
