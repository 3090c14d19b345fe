#include "core/frontend/pt2/folding.h"

#include <ATen/ATen.h>

#include "core/graph/graph.h"

namespace brisk::pt2 {
namespace {

// Counts every {"as_tensor": {"name": N}} inside `j`; `reader` (may be null) is the node.
void countReads(const Json& j, const Json* reader, TensorReads& reads) {
  if (j.is_object()) {
    auto t = j.find("as_tensor");
    if (t != j.end() && t->is_object() && t->contains("name") && (*t)["name"].is_string()) {
      const std::string& name = (*t)["name"].get_ref<const std::string&>();
      ++reads.count[name];
      if (reader) reads.reader[name] = reader;
      return;
    }
    for (const auto& [k, v] : j.items()) countReads(v, reader, reads);
  } else if (j.is_array()) {
    for (const Json& v : j) countReads(v, reader, reads);
  }
}

}  // namespace

TensorReads tensorReads(const Json& graph) {
  TensorReads reads;
  if (auto nodes = graph.find("nodes"); nodes != graph.end() && nodes->is_array())
    for (const Json& n : *nodes)
      if (auto in = n.find("inputs"); in != n.end()) countReads(*in, &n, reads);
  if (auto outs = graph.find("outputs"); outs != graph.end()) countReads(*outs, nullptr, reads);
  return reads;
}

std::pair<at::Tensor, at::Tensor> foldBatchNorm(const at::Tensor& w, const at::Tensor& bias, const at::Tensor& gamma,
                                                const at::Tensor& beta, const at::Tensor& mean, const at::Tensor& var,
                                                double eps) {
  at::Tensor scale = at::rsqrt(var + eps);
  if (gamma.defined()) scale = scale * gamma;
  std::vector<int64_t> shape(w.dim(), 1);
  shape[0] = -1;
  at::Tensor new_w = (w * scale.reshape(shape)).contiguous();
  at::Tensor b = bias.defined() ? bias : at::zeros_like(mean);
  at::Tensor new_b = (b - mean) * scale;
  if (beta.defined()) new_b = new_b + beta;
  return {new_w, new_b.contiguous()};
}

}  // namespace brisk::pt2
