#pragma once
// The constant arguments of an aten::lstm.input / aten::gru.input node, read and checked
// once for every kernel that runs the layer on frozen weights without ATen's RNN code:
// brisk's fp32 layers (rnn_layers.cc) and ops_quantized's dynamic-int8 layers
// (ops_quantized/rnn_int8.cc). Header-only: both plugins compile it.
//
// aten::lstm.input(input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers,
//   float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)
// aten::gru.input(input, Tensor hx, Tensor[] params, bool has_biases, int num_layers,
//   float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)
#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "core/graph/graph.h"

namespace brisk::ops_cpu::rnn {

struct RnnNode {
  bool lstm;
  std::vector<at::Tensor> params;  // per layer and direction: W_ih, W_hh[, b_ih, b_hh]
  bool has_biases;
  int64_t layers, dirs;
  double dropout;
  bool batch_first;
  int64_t input = 0, hidden = 0;

  int64_t gates() const { return lstm ? 4 : 3; }
  size_t perLayer() const { return has_biases ? 4 : 2; }
  // The weights of layer l, direction d: params()[index .. index + perLayer()).
  const at::Tensor* weights(int64_t l, int64_t d) const { return &params[(l * dirs + d) * perLayer()]; }
};

// The layer of `n` (an LSTM when `lstm`, else a GRU: the schemas above, under any kind)
// when its weights and flags are constants, train is false, it has no
// projection (proj_size: a fifth weight per layer and direction) and every weight is a
// dense fp32 CPU tensor of the stack's shapes; else nullopt (ATen's kernels serve it).
inline std::optional<RnnNode> readRnnNode(const Node& n, bool lstm) {
  RnnNode r;
  r.lstm = lstm;
  if (n.inputs().size() != 9 || n.outputs().size() != (r.lstm ? 3u : 2u)) return std::nullopt;
  for (size_t i = 2; i < 9; ++i)
    if (!n.input(i)->isConstant()) return std::nullopt;
  auto c = [&](size_t i) -> const c10::IValue& { return n.input(i)->constant(); };
  if (!c(2).isTensorList() || !c(3).isBool() || !c(4).isInt() || !(c(5).isDouble() || c(5).isInt()) ||
      !c(6).isBool() || !c(7).isBool() || !c(8).isBool())
    return std::nullopt;
  if (c(6).toBool()) return std::nullopt;  // train: rnn.cc's kernel refuses it with its message
  r.params = c(2).toTensorVector();
  r.has_biases = c(3).toBool();
  r.layers = c(4).toInt();
  r.dirs = c(7).toBool() ? 2 : 1;
  r.dropout = c(5).isDouble() ? c(5).toDouble() : double(c(5).toInt());
  r.batch_first = c(8).toBool();

  const size_t per = r.perLayer();
  if (r.layers < 1 || r.params.size() != per * r.layers * r.dirs) return std::nullopt;
  for (const at::Tensor& t : r.params)
    if (!t.defined() || t.scalar_type() != at::kFloat ||
        !t.unsafeGetTensorImpl()->key_set().has(c10::DispatchKey::CPU))  // dense CPU
      return std::nullopt;
  if (r.params[1].dim() != 2 || r.params[0].dim() != 2) return std::nullopt;
  r.hidden = r.params[1].size(1);
  r.input = r.params[0].size(1);
  if (r.hidden < 1 || r.input < 1) return std::nullopt;
  const int64_t g = r.gates() * r.hidden;
  for (int64_t l = 0; l < r.layers; ++l)
    for (int64_t d = 0; d < r.dirs; ++d) {
      const at::Tensor* w = r.weights(l, d);
      const int64_t in = l == 0 ? r.input : r.dirs * r.hidden;
      if (w[0].dim() != 2 || w[0].size(0) != g || w[0].size(1) != in) return std::nullopt;
      if (w[1].dim() != 2 || w[1].size(0) != g || w[1].size(1) != r.hidden) return std::nullopt;
      for (size_t b = 2; b < per; ++b)
        if (w[b].dim() != 1 || w[b].size(0) != g) return std::nullopt;
    }
  return r;
}

}  // namespace brisk::ops_cpu::rnn
