#pragma once
// int8_dynamic for recurrent layers: aten::lstm.input / aten::gru.input with frozen fp32
// weights (ops_cpu/native/rnn_node.h) become
//   ops_quantized::lstm_int8_dynamic / ops_quantized::gru_int8_dynamic
// (same inputs and schema), whose kernel runs brisk's time loop (ops_cpu/simd/
// rnn_sequence.h) with both projections in int8 (int8_gemm.h): W_ih and W_hh quantized
// per output channel at load, and per call the sequence's rows (input projection, one
// call for all steps) and each step's state rows (recurrent projection) quantized to
// uint8 over their own ranges. Gates, cell state and outputs stay fp32.
//
// Inputs the loop does not cover (rnn_call.h: another dtype, strided or empty input,
// unbatched) run ATen's fp32 layer on the unquantized weights. Core IR programs, whose
// LSTM is unrolled into per-step addmm nodes, get their projections in int8 from the
// linear rewrite instead (linear_rewrite.h).
#include <cstddef>

#include "core/graph/graph.h"
#include "core/kernels/plugin.h"

namespace brisk::ops_quantized {

constexpr const char* kLstmInt8Kind = "ops_quantized::lstm_int8_dynamic";
constexpr const char* kGruInt8Kind = "ops_quantized::gru_int8_dynamic";

// Rewrites the recurrent layers of `block` that the int8 kernel takes; returns how many.
size_t rewriteRnnsInt8(Graph& g, Block& block);

void registerRnnInt8Kernels(PluginRegistrar& r);

}  // namespace brisk::ops_quantized
