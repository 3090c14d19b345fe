#pragma once
// brisk's own recurrent layers: aten::lstm.input and aten::gru.input (TorchScript, the
// .pt2 aten IR, and the core IR's unrolled layers once ops_cpu.fuse_rnn_layer has
// rebuilt them: fused/rnn_layer_fusion.h) with frozen weights, computed without ATen's
// RNN code.
//
// Per layer: the input projection of all time steps (both directions) as one GEMM,
// x [T*B, I] x W_ih^T + b_ih; then per step and direction the recurrent projection
// h [B, H] x W_hh^T + b_hh on a weight packed at load (small_gemm, or the BLAS call for
// row counts small_gemm does not take) and one vector loop over the gates
// (simd/lstm_gates.h, simd/gru_gates.h). Why: ATen's layer makes a tensor per gate and
// per step and dispatches ~10 ops per step, which at batch 1 costs several times the
// arithmetic; ONNX Runtime-style fused loops are 4-10x faster on the zoo's models.
//
// Results match ATen to fp32 rounding (another GEMM summation order, Cephes exp/tanh),
// not bit for bit; the plugin option ops_cpu.small_gemm=false does not make them exact
// either (the gate functions still differ), so users who need ATen's bits run with
// use_out_variants off, which leaves these nodes to rnn.cc's at::lstm / at::gru kernels.
//
// The factories decline (so rnn.cc's ATen kernels serve the node) when the weights are
// not constants, a flag is not a constant, train is true, the LSTM has a projection
// (proj_size), or the weights are not fp32 dense CPU tensors. At run time, inputs the
// loop does not cover (another dtype, non-contiguous input or state, empty sequence or
// batch, unbatched 2-D input) go to at::lstm / at::gru with the same weights.
#include "core/kernels/plugin.h"

namespace brisk::ops_cpu::native {

// Out-variant kernels for aten::lstm.input and aten::gru.input.
void registerBriskRnnKernels(PluginRegistrar& r);

}  // namespace brisk::ops_cpu::native
