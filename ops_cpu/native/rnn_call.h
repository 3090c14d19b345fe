#pragma once
// One call of a frozen-weight LSTM / GRU kernel (rnn_node.h): the inputs the time loop
// (simd/rnn_sequence.h) covers, read from the kernel context with its outputs sized, and
// ATen's layer on the same weights for every other input. Header-only: brisk's fp32
// layers (rnn_layers.cc) and ops_quantized's int8 layers (ops_quantized/rnn_int8.cc)
// share it.
#include <ATen/ATen.h>

#include <optional>
#include <tuple>
#include <vector>

#include "core/kernels/plugin.h"
#include "ops_cpu/native/rnn_node.h"
#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/simd/rnn_sequence.h"

namespace brisk::ops_cpu::rnn {

struct RnnCall {
  out::RnnShape shape;
  out::RnnBuffers io;
};

// The call's shape and buffers (outputs sized: the retained ones resized, else new) when
// the input is a dense contiguous fp32 [T, B, I] (or [B, T, I]) with T, B >= 1 and the
// states are contiguous fp32 of the stack's shape; nullopt otherwise (another dtype, a
// strided input or state, an empty sequence or batch, unbatched 2-D input), with no
// output touched; also nullopt when `serves(rows, batch)` -- whether the caller's
// projections take this call's T * B and B rows -- is false.
template <typename Serves>
std::optional<RnnCall> rnnCall(KernelContext& ctx, const RnnNode& r, const Serves& serves) {
  auto plain = [](const at::Tensor& t) {
    return t.defined() && t.scalar_type() == at::kFloat && out::isDenseCpu(t) && t.is_contiguous();
  };
  const at::Tensor& x = ctx.tensor(0);
  const at::Tensor* h0 = nullptr;
  const at::Tensor* c0 = nullptr;
  if (!r.lstm) {
    h0 = &ctx.tensor(1);
  } else {
    c10::ArrayRef<c10::IValue> hx = ctx.input(1).toListRef();
    if (hx.size() != 2) return std::nullopt;
    h0 = &hx[0].toTensor();
    c0 = &hx[1].toTensor();
  }
  if (!plain(x) || x.dim() != 3 || x.size(2) != r.input || x.size(0) == 0 || x.size(1) == 0) return std::nullopt;
  const int64_t batch = x.size(r.batch_first ? 0 : 1), steps = x.size(r.batch_first ? 1 : 0);
  auto state_ok = [&](const at::Tensor* s) {
    return s && plain(*s) && s->dim() == 3 && s->size(0) == r.layers * r.dirs && s->size(1) == batch &&
           s->size(2) == r.hidden;
  };
  if (!state_ok(h0) || (r.lstm && !state_ok(c0)) || !serves(steps * batch, batch)) return std::nullopt;

  RnnCall call;
  call.shape = out::RnnShape{r.lstm, r.layers, r.dirs, r.hidden, steps, batch, r.batch_first};
  const int64_t dh = r.dirs * r.hidden;
  const int64_t seq_out[3] = {r.batch_first ? batch : steps, r.batch_first ? steps : batch, dh};
  const int64_t state_out[3] = {r.layers * r.dirs, batch, r.hidden};
  call.io.x = x.data_ptr<float>();
  call.io.h0 = h0->data_ptr<float>();
  call.io.c0 = c0 ? c0->data_ptr<float>() : nullptr;
  call.io.y = out::sizedFloatOutput(ctx, 0, seq_out);
  call.io.hn = out::sizedFloatOutput(ctx, 1, state_out);
  call.io.cn = r.lstm ? out::sizedFloatOutput(ctx, 2, state_out) : nullptr;
  return call;
}

// ATen's layer on the node's weights: its results, or its error.
inline void runAtenRnn(KernelContext& ctx, const RnnNode& r) {
  if (r.lstm) {
    const std::vector<at::Tensor> hx = ctx.input(1).toTensorVector();
    auto y = at::lstm(ctx.tensor(0), hx, r.params, r.has_biases, r.layers, r.dropout, false, r.dirs == 2,
                      r.batch_first);
    ctx.output(0) = std::move(std::get<0>(y));
    ctx.output(1) = std::move(std::get<1>(y));
    ctx.output(2) = std::move(std::get<2>(y));
  } else {
    auto y = at::gru(ctx.tensor(0), ctx.tensor(1), r.params, r.has_biases, r.layers, r.dropout, false, r.dirs == 2,
                     r.batch_first);
    ctx.output(0) = std::move(std::get<0>(y));
    ctx.output(1) = std::move(std::get<1>(y));
  }
}

}  // namespace brisk::ops_cpu::rnn
