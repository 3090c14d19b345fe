#pragma once
// The graph pass ops_cpu.fuse_rnn_layer: turns torch.export's unrolled nn.LSTM / nn.GRU
// layers back into one aten::lstm.input / aten::gru.input node each, which brisk's own
// layer kernel (native/rnn_layers.h) serves as it does for TorchScript (issue 24).
//
// Why a layer and not only fused steps: after ops_cpu.fuse_lstm_cell /
// ops_cpu.fuse_gru_cell a direction is still T step nodes, each with its own copy of the
// packed recurrent weight (T copies stream through the cache instead of one staying
// in L1/L2), plus the input projection, a flip of it for the reverse direction and the
// cats that stack the outputs: about twice the time of the layer kernel at the zoo's
// sizes. The layer kernel computes both directions' input projections in one GEMM and
// loops over the steps on one packed weight per direction.
//
// What is recognised, per block, after the step fusions (their nodes are its input):
//   G   = view(addmm(b_ih, X2, W_ih^T, 1, 1), [T, B, gates * H])      the projection
//   (G' = flip(G, [0]) for a reverse direction)
//   T step nodes (ops_cpu::lstm_step / ops_cpu::gru_step) reading rows 0 .. T-1 of G
//   (G'), each reading the previous step's state, all with the same W_hh, b_hh (the
//   first step may instead have a zero constant state: nn.LSTM's default, folded at load)
//   Y   = cat([h_0 .. h_T-1] in time order, 0)                          [T, B, H]
// and, for a bidirectional layer, cat([Y_forward, Y_reverse], 2) of two such directions
// over the same X2. Every intermediate value must be read by the pattern alone (the last
// step's h and c may also be read elsewhere: they become the layer's h_n / c_n, and for
// a one-direction layer the export's stacking view(cat([squeeze(h, [0])], 0), [1, B, H])
// becomes h_n itself). A
// reverse direction without its forward twin stays as steps. The layer reads
// X = view(X2, [T, B, I]) and the initial state expanded to [1, B, H] per direction
// (the steps read it through a view and broadcasting; nn.LSTM / nn.GRU give [1, B, H]).
//
// Results: the layer kernel's, which match the fused steps to fp32 rounding (same GEMM
// paths; only the folded first step's gates change from the pointwise loop to the gate
// kernel).
#include <cstddef>

#include "core/graph/graph_pass.h"
#include "core/kernels/plugin.h"

namespace brisk::ops_cpu {

// Returns the number of layer nodes created.
size_t fuseRnnLayers(Graph& g, const PassContext& ctx);

void registerRnnLayerFusion(PluginRegistrar& r);

}  // namespace brisk::ops_cpu
