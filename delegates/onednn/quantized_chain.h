#pragma once
// The quantized groups of PT2E programs (torchao's prepare_pt2e / convert_pt2e with
// X86InductorQuantizer), which the onednn backend runs as one oneDNN int8 call:
//
//   dequantize(xq) -> conv   [unary | add(dequantize(oq)) [relu]] [-> quantize]
//   dequantize(xq) -> linear [unary]                              [-> quantize]
//
// xq and oq are uint8 activations quantized per tensor (full range 0..255), the weight
// is a constant int8 tensor dequantized per output channel with zero points 0 (folded at
// load into a float weight, whose integers and scales the graph keeps on record:
// Graph::FoldedFrom). Without the closing quantize the result is fp32, as the program's
// is there. The float ops in the middle are a FusionChain (fusion_chain.h), so the
// activations and the residual add are exactly those the fp32 backend fuses.
//
// One parser serves claim() (growQuantizedChain, from each anchor) and compile()
// (parseQuantizedChain, on the delegate's nested block).
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <ATen/core/Tensor.h>

#include "core/graph/graph.h"
#include "delegates/onednn/fusion_chain.h"

namespace brisk::onednn {

// A uint8 per-tensor quantization: real = (q - zero_point) * scale.
struct QuantParams {
  double scale = 1.0;
  int64_t zero_point = 0;
};

struct QuantizedChain {
  FusionChain body;                 // anchor first; no batch norm, no depthwise step
  std::vector<const Node*> nodes;   // every node of the group (core wraps them in block order)
  const Node* dq_x = nullptr;       // dequantize of the anchor's source
  QuantParams x;
  const Node* dq_other = nullptr;   // dequantize of the residual add's other operand, or null
  QuantParams other;
  const Node* q = nullptr;          // the closing quantize, or null: the result is fp32
  QuantParams y;
  const Value* float_weight = nullptr;  // the anchor's weight: the fold of `weight`
  const Graph::FoldedFrom* folded = nullptr;  // what the fold read
  at::Tensor weight;                // int8, as the program holds it ([out, in, kh, kw] or [out, in])
  at::Tensor weight_scales;         // fp32, one per output channel
  std::string str() const;
};

// Whether `n` is a dequantize_per_tensor / quantize_per_tensor of uint8 over 0..255 with
// constant parameters; *p gets them.
bool isUint8Dequantize(const Node& n, QuantParams* p = nullptr);
bool isUint8Quantize(const Node& n, QuantParams* p = nullptr);

// The longest quantized chain from `anchor` (a conv or linear whose source is a uint8
// dequantize) that takes no node of `taken`; nullopt when there is none.
std::optional<QuantizedChain> growQuantizedChain(const Node& anchor, const std::unordered_set<const Node*>& taken);

// Parses a delegate's nested nodes back into the chain; nullopt (reason in *why) when
// they are not one.
std::optional<QuantizedChain> parseQuantizedChain(const std::vector<const Node*>& nodes, std::string* why = nullptr);

// PT2E's quantized max pooling: dequantize(xq) -> max_pool2d -> quantize with the same
// scale and zero point (X86InductorQuantizer shares them), which is max pooling of the
// uint8 values themselves: dequantizing and quantizing are monotonic and cancel.
struct QuantizedMaxPool {
  std::vector<const Node*> nodes;  // dequantize, max_pool2d, quantize
  const Node* dq = nullptr;
  const Node* pool = nullptr;
  std::vector<int64_t> kernel, stride, padding, dilation;  // two values each
  bool ceil_mode = false;
};
std::optional<QuantizedMaxPool> growQuantizedMaxPool(const Node& pool, const std::unordered_set<const Node*>& taken);
std::optional<QuantizedMaxPool> parseQuantizedMaxPool(const std::vector<const Node*>& nodes);

// Whether the delegate node `n` is an onednn partition of a quantized chain or pool.
bool isQuantizedPartition(const Node& n);

}  // namespace brisk::onednn
