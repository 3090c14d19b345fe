#pragma once
// TorchScript IR of one aten::lstm / aten::gru layer stack with constant (frozen)
// weights, and inputs for it: the recurrent-layer kernel tests (native_rnn_test.cc,
// quantized_rnn_test.cc) build their models from these.
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "tests/ops/op_tester.h"

namespace brisk::testing {

struct RnnShape {
  int gates;  // 4: LSTM, 3: GRU
  int64_t input, hidden, layers;
  bool bidirectional, biases;
  int64_t proj = 0;  // LSTM proj_size (0: none)
  // The weights are sin(0, 1, 2, ...) times this (1: |w| up to 1; nn.LSTM / nn.GRU
  // initialize within 1 / sqrt(hidden)), folded into constants at load.
  double scale = 1.0;
};

// IR lines defining constant weights %p<i> in nn.LSTM/nn.GRU's _flat_weights order and
// a list %params of them (constant-folded by the frontend, as frozen weights are).
inline std::string paramsIR(const RnnShape& s) {
  std::string ir = s.scale == 1.0 ? "" : "  %scale : float = prim::Constant[value=" + std::to_string(s.scale) + "]()\n";
  std::string names;
  int i = 0;
  const int64_t dirs = s.bidirectional ? 2 : 1;
  const int64_t out = s.proj ? s.proj : s.hidden;
  auto add = [&](std::vector<int64_t> shape) {
    const std::string n = "p" + std::to_string(i++);
    if (s.scale == 1.0) {
      ir += constTensorIR(n, shape);
    } else {
      ir += constTensorIR(n + "_unit", shape);
      ir += "  %" + n + " : Tensor = aten::mul(%" + n + "_unit, %scale)\n";
    }
    names += (names.empty() ? "%" : ", %") + n;
  };
  for (int64_t l = 0; l < s.layers; ++l)
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t in = l == 0 ? s.input : out * dirs;
      add({s.gates * s.hidden, in});
      add({s.gates * s.hidden, out});
      if (s.biases) {
        add({s.gates * s.hidden});
        add({s.gates * s.hidden});
      }
      if (s.proj) add({s.proj, s.hidden});
    }
  return ir + "  %params : Tensor[] = prim::ListConstruct(" + names + ")\n";
}

inline std::string flagsIR(const RnnShape& s, bool batch_first, bool train = false) {
  return "  %has_biases : bool = prim::Constant[value=" + std::to_string(s.biases) +
         "]()\n"
         "  %layers : int = prim::Constant[value=" +
         std::to_string(s.layers) +
         "]()\n"
         "  %dropout : float = prim::Constant[value=0.]()\n"
         "  %train : bool = prim::Constant[value=" +
         std::to_string(train) +
         "]()\n"
         "  %bidir : bool = prim::Constant[value=" +
         std::to_string(s.bidirectional) +
         "]()\n"
         "  %batch_first : bool = prim::Constant[value=" +
         std::to_string(batch_first) + "]()\n";
}

inline std::string lstmIR(const RnnShape& s, bool batch_first, bool train = false) {
  return "graph(%x : Tensor, %h0 : Tensor, %c0 : Tensor):\n" + paramsIR(s) + flagsIR(s, batch_first, train) +
         "  %hx : Tensor[] = prim::ListConstruct(%h0, %c0)\n"
         "  %y : Tensor, %h : Tensor, %c : Tensor = aten::lstm(%x, %hx, %params, %has_biases, %layers, %dropout, "
         "%train, %bidir, %batch_first)\n"
         "  %r : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%y, %h, %c)\n"
         "  return (%r)";
}

// Inputs for a padded sequence of `len` steps, `batch` samples.
inline std::vector<c10::IValue> lstmInputs(const RnnShape& s, bool batch_first, int64_t len, int64_t batch) {
  const int64_t dirs = s.bidirectional ? 2 : 1;
  at::Tensor x = batch_first ? at::randn({batch, len, s.input}) : at::randn({len, batch, s.input});
  return {x, at::randn({s.layers * dirs, batch, s.proj ? s.proj : s.hidden}),
          at::randn({s.layers * dirs, batch, s.hidden})};
}

inline std::string gruIR(const RnnShape& s, bool batch_first) {
  return "graph(%x : Tensor, %h0 : Tensor):\n" + paramsIR(s) + flagsIR(s, batch_first) +
         "  %y : Tensor, %h : Tensor = aten::gru(%x, %h0, %params, %has_biases, %layers, %dropout, %train, %bidir, "
         "%batch_first)\n"
         "  %r : (Tensor, Tensor) = prim::TupleConstruct(%y, %h)\n"
         "  return (%r)";
}

// x, h0[, c0] for either cell; `zero_state`: the zeros nn.LSTM / nn.GRU pass when the
// caller gives no initial state.
inline std::vector<c10::IValue> rnnInputs(const RnnShape& s, bool batch_first, int64_t len, int64_t batch,
                                   bool zero_state = false) {
  std::vector<c10::IValue> v = lstmInputs(s, batch_first, len, batch);
  if (s.gates == 3) v.pop_back();
  if (zero_state)
    for (size_t i = 1; i < v.size(); ++i) v[i] = at::zeros_like(v[i].toTensor());
  return v;
}

}  // namespace brisk::testing
