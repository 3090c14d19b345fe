#pragma once
// The graph pass ops_cpu.fuse_gru_cell: finds GRU time steps in the core ATen IR
// (torch.export unrolls nn.GRU into ~17 nodes per step) and replaces each with one
// ops_cpu::gru_step node (gru_step.h), as ops_cpu.fuse_lstm_cell does for LSTM steps.
// Only an exact match is rewritten: every op, every constant argument and every
// intermediate value (read by the step alone) is checked; anything else stays as it
// is. The replaced nodes are left unread for eliminate_dead_code_late.
#include <cstddef>

#include "core/graph/graph_pass.h"
#include "core/kernels/plugin.h"

namespace brisk::ops_cpu {

// Returns the number of time steps fused.
size_t fuseGruCells(Graph& g, const PassContext& ctx);

void registerGruCellFusion(PluginRegistrar& r);

}  // namespace brisk::ops_cpu
