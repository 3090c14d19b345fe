#pragma once
// ops_cpu::lstm_step: one LSTM time step as the core ATen IR spells it once its input
// projection is hoisted out of the time loop (torch.export of nn.LSTM):
//
//   gates_x = x_step < 0 ? gx : gx[x_step:x_step + 1].squeeze(0)
//   gates  = addmm(b_hh, h.view(h_shape), w_hh_t).view(gates_shape) + gates_x
//   i, f, g, o = split_with_sizes(gates, [H, H, H, H], split_dim)
//   c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
//   h' = sigmoid(o) * tanh(c')
//   returns (h', c')
//
// with H = gates_shape[-1] / 4 (gate order i, f, g, o, ATen's). x_step >= 0 when the
// fusion also absorbed the slice and squeeze that took this step's row out of the input
// projection of all steps (two view nodes per step that cost about as much as the step). The op has a real c10
// schema (registered with the dispatcher by this plugin) and a CPU implementation that
// is exactly the ATen sequence above, so the fallback kernel and the dispatcher can run
// it too; the out-variant kernel (lstm_step.cc) does the GEMM through linear's paths and
// then one elementwise loop over the four gates. The graph pass ops_cpu.fuse_lstm_cell
// (lstm_cell_fusion.h) creates these nodes.
#include <ATen/core/function_schema.h>

#include "core/kernels/plugin.h"

namespace brisk::ops_cpu {

constexpr const char* kLstmStepOp = "ops_cpu::lstm_step";

// The op's schema; registers it (and its CPU implementation) with the dispatcher on the
// first call. Thread-safe.
const c10::FunctionSchema& lstmStepSchema();

// The schema and the out-variant kernel.
void registerLstmStep(PluginRegistrar& r);

}  // namespace brisk::ops_cpu
