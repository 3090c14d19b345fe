#pragma once
// The graph pass ops_cpu.fuse_lstm_cell: finds LSTM time steps in the core ATen IR
// (torch.export unrolls nn.LSTM into ~15 nodes per step) and replaces each with one
// ops_cpu::lstm_step node (lstm_step.h). Only an exact match is rewritten: every op, every
// constant argument and every intermediate value (read by the step alone) is checked;
// anything else stays as it is. The replaced nodes are left unread for
// eliminate_dead_code_late.
#include <cstddef>

#include "core/graph/graph_pass.h"
#include "core/kernels/plugin.h"

namespace brisk::ops_cpu {

// Returns the number of time steps fused.
size_t fuseLstmCells(Graph& g, const PassContext& ctx);

void registerLstmCellFusion(PluginRegistrar& r);

}  // namespace brisk::ops_cpu
