#pragma once
// The graph pass ops_quantized.reduce_precision. With Options::precision empty it does
// nothing. Otherwise each linear layer with a constant fp32 weight -- aten::linear, and
// the core ATen IR's addmm(b, x, W^T) (beta = alpha = 1) and mm(x, W^T) -- becomes one
// node of the first requested mode (precision.h):
//   ops_quantized::linear_fp16(x, W, b)          fp16_weights
//   ops_quantized::linear_int8_dynamic(x, W, b)  int8_dynamic
//   ops_quantized::linear_int8_dynamic_relu(x, W, b)
//                                                int8_dynamic, for a layer whose result
//                                                only an aten::relu reads: fbgemm applies
//                                                the relu as it dequantizes (one pass over
//                                                the result less)
// and, when int8_dynamic is listed anywhere, each LSTM / GRU layer with frozen weights
// becomes ops_quantized::lstm_int8_dynamic / gru_int8_dynamic (rnn_int8.h).
// W is the layer's fp32 weight [N, K] as the model stores it (its kernel packs it at
// load), b its bias or None. Runs before delegate backends claim nodes, so a rewritten
// layer is never also claimed by one. Nothing is rewritten for a mode whose kernel kind
// the Module does not use (fallback_only, use_out_variants / use_native off).
#include <cstddef>
#include <vector>

#include "core/graph/graph_pass.h"
#include "core/kernels/plugin.h"
#include "ops_quantized/precision.h"

namespace c10 {
struct FunctionSchema;
}

namespace brisk::ops_quantized {

constexpr const char* kLinearFp16Kind = "ops_quantized::linear_fp16";
constexpr const char* kLinearInt8Kind = "ops_quantized::linear_int8_dynamic";
constexpr const char* kLinearInt8ReluKind = "ops_quantized::linear_int8_dynamic_relu";

// Before ops_cpu's fusions (kPassOrderFuse) and the delegates' partitioning.
constexpr int kReducePrecisionOrder = kPassOrderFuse - 50;

// `modes`: requestedModes(ctx.options, ctx.model), not empty.
size_t reducePrecision(Graph& graph, const PassContext& ctx, std::vector<Mode> modes);

// The schema of the rewritten nodes: (Tensor x, Tensor w, Tensor? b) -> Tensor.
const c10::FunctionSchema* quantizedLinearSchema(const char* kind);

}  // namespace brisk::ops_quantized
