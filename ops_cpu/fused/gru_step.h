#pragma once
// ops_cpu::gru_step: one GRU time step as the core ATen IR spells it once its input
// projection is hoisted out of the time loop (torch.export of nn.GRU):
//
//   gh     = addmm(b_hh, h.view(h_shape), w_hh_t).view(gates_shape)
//   gx_t   = x_step < 0 ? gx : gx[x_step:x_step + 1].squeeze(0)
//   xr, xz, xn = split_with_sizes(gx_t, [H, H, H], x_split_dim)
//   hr, hz, hn = split_with_sizes(gh, [H, H, H], split_dim)
//   r = sigmoid(hr + xr);  z = sigmoid(hz + xz);  n = tanh(xn + hn * r)
//   h' = (h - n) * z + n
//
// with H = gates_shape[-1] / 3 (PyTorch's gate order r, z, n). x_step >= 0 when the
// fusion also absorbed the slice and squeeze that took this step's row out of the input
// projection of all steps (two view nodes per step that cost about as much as the step). Like ops_cpu::lstm_step
// (lstm_step.h): a real c10 schema whose CPU implementation is exactly that ATen
// sequence (the fallback kernel and the dispatcher run it), and an out-variant kernel
// (gru_step.cc) that does the GEMM through linear's paths and then one loop over the
// gates (simd/gru_gates.h). The graph pass ops_cpu.fuse_gru_cell (gru_cell_fusion.h)
// creates these nodes.
#include <ATen/core/function_schema.h>

#include "core/kernels/plugin.h"

namespace brisk::ops_cpu {

constexpr const char* kGruStepOp = "ops_cpu::gru_step";

// The op's schema; registers it (and its CPU implementation) with the dispatcher on the
// first call. Thread-safe.
const c10::FunctionSchema& gruStepSchema();

// The schema and the out-variant kernel.
void registerGruStep(PluginRegistrar& r);

}  // namespace brisk::ops_cpu
