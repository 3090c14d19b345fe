#pragma once
// The time loop of a stacked, maybe bidirectional LSTM / GRU on raw fp32 buffers, over
// projections the caller supplies: brisk's fp32 layers (ops_cpu/native/rnn_layers.cc,
// frozen fp32 GEMMs) and the dynamic-int8 layers (ops_quantized/rnn_int8.cc) run the same
// loop, so they differ only in how x W^T + b is computed.
//
// Per layer: the input projection of all time steps (both directions) in one call,
// then per step and direction the recurrent projection of the state and one vector loop
// over the gates (lstm_gates.h / gru_gates.h). Header-only and torch-free.
#include <cstdint>
#include <cstring>

#include "ops_cpu/simd/gru_gates.h"
#include "ops_cpu/simd/lstm_gates.h"

namespace brisk::ops_cpu::out {

struct RnnShape {
  bool lstm;  // else GRU
  int64_t layers, dirs, hidden;
  int64_t steps, batch;
  bool batch_first;

  int64_t gates() const { return lstm ? 4 : 3; }
  // Floats of scratch runRnnSequence needs.
  int64_t scratchFloats() const {
    const int64_t rows = steps * batch, g = gates() * hidden, state = batch * hidden;
    const int64_t seq = layers > 1 ? rows * dirs * hidden : 0;
    return rows * dirs * g + 2 * seq + batch * g + 4 * state;
  }
};

struct RnnBuffers {
  const float* x;   // [T, B, I] (or [B, T, I] when batch_first)
  const float* h0;  // [layers * dirs, B, H]
  const float* c0;  // LSTM only
  float* y;         // [T, B, dirs * H] (or batch first)
  float* hn;        // [layers * dirs, B, H]
  float* cn;        // LSTM only
};

// `input_projection(layer, in, rows, out)`: out [rows, dirs * G * H] = in W_ih^T + b_ih,
// both directions stacked (direction d at d * G * H). `recurrent_projection(layer, dir,
// h, rows, out)`: out [rows, G * H] = h W_hh^T + b_hh. `scratch`: s.scratchFloats().
template <typename InputProjection, typename RecurrentProjection>
void runRnnSequence(const RnnShape& s, const RnnBuffers& io, float* scratch, const InputProjection& input_projection,
                    const RecurrentProjection& recurrent_projection) {
  const int64_t steps = s.steps, batch = s.batch, h = s.hidden, g = s.gates() * h, dh = s.dirs * h;
  const int64_t rows = steps * batch;
  const int64_t gx_size = rows * s.dirs * g, seq_size = s.layers > 1 ? rows * dh : 0, state = batch * h;
  // The input projections of one layer, the sequences between layers, the recurrent
  // projection and two states (ping-pong).
  float* gx = scratch;
  float* seq[2] = {gx + gx_size, gx + gx_size + seq_size};
  float* gh = seq[1] + seq_size;
  float* hbuf[2] = {gh + batch * g, gh + batch * g + state};
  float* cbuf[2] = {hbuf[1] + state, hbuf[1] + 2 * state};

  for (int64_t l = 0; l < s.layers; ++l) {
    const float* in = l == 0 ? io.x : seq[(l - 1) % 2];
    float* out = l == s.layers - 1 ? io.y : seq[l % 2];
    // Rows keep the sequence's own order (t * B + b, or b * T + t when batch_first).
    input_projection(l, in, rows, gx);
    for (int64_t d = 0; d < s.dirs; ++d) {
      const int64_t sd = l * s.dirs + d;
      const float* hp = io.h0 + sd * state;
      const float* cp = s.lstm ? io.c0 + sd * state : nullptr;
      for (int64_t st = 0; st < steps; ++st) {
        const int64_t t = d == 0 ? st : steps - 1 - st;
        recurrent_projection(l, d, hp, batch, gh);
        float* hnext = hbuf[st % 2];
        float* cnext = cbuf[st % 2];
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t row = s.batch_first ? b * steps + t : t * batch + b;
          const float* gxr = gx + row * s.dirs * g + d * g;
          if (s.lstm)
            lstmGates(gh + b * g, gxr, cp + b * h, hnext + b * h, cnext + b * h, 1, h);
          else
            gruGates(gh + b * g, gxr, hp + b * h, hnext + b * h, 1, h);
          std::memcpy(out + row * dh + d * h, hnext + b * h, h * sizeof(float));
        }
        hp = hnext;
        cp = cnext;
      }
      std::memcpy(io.hn + sd * state, hp, state * sizeof(float));
      if (s.lstm) std::memcpy(io.cn + sd * state, cp, state * sizeof(float));
    }
  }
}

}  // namespace brisk::ops_cpu::out
