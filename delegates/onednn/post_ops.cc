#include "delegates/onednn/post_ops.h"

#include <stdexcept>

namespace brisk::onednn {

void appendUnary(dnnl::post_ops& ops, const Unary& u) {
  using A = dnnl::algorithm;
  const auto& s = u.scalars;
  auto add = [&](A a, float alpha = 0.f, float beta = 0.f) { ops.append_eltwise(a, alpha, beta); };
  if (u.attr == "none") return;
  if (u.attr == "relu" && s.empty()) return add(A::eltwise_relu);
  if (u.attr == "leaky_relu" && s.size() == 1) return add(A::eltwise_relu, static_cast<float>(s[0]));
  // hardtanh(lo, hi) = min(max(x, lo), hi) = oneDNN's clip(alpha = lo, beta = hi).
  if (u.attr == "hardtanh" && s.size() == 2) return add(A::eltwise_clip, static_cast<float>(s[0]), static_cast<float>(s[1]));
  if (u.attr == "sigmoid") return add(A::eltwise_logistic);
  if (u.attr == "tanh") return add(A::eltwise_tanh);
  if (u.attr == "swish") return add(A::eltwise_swish, 1.f);
  // x * relu6(x + 3) / 6 and relu6(x + 3) / 6: oneDNN's forms with alpha 1/6, beta 1/2.
  if (u.attr == "hardswish") return add(A::eltwise_hardswish, 1.f / 6.f, 0.5f);
  if (u.attr == "hardsigmoid") return add(A::eltwise_hardsigmoid, 1.f / 6.f, 0.5f);
  if (u.attr == "gelu" && (!u.algorithm || *u.algorithm == "none")) return add(A::eltwise_gelu_erf);
  if (u.attr == "gelu" && *u.algorithm == "tanh") return add(A::eltwise_gelu_tanh);
  throw std::runtime_error("no oneDNN post-op for " + u.str());
}

}  // namespace brisk::onednn
