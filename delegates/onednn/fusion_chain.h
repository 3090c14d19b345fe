#pragma once
// The groups the onednn backend runs: one anchor (a convolution or a linear layer with
// constant weights) and the ops that oneDNN applies to its result in the same pass
// (post-ops), in one of these shapes:
//
//   conv   [batch norm] [unary | add(other) [relu]]
//   conv1x1 [batch norm] [unary] dwconv3x3 [batch norm] [unary]
//   linear               [unary | add(other)]
//
// The second shape is a pointwise convolution (1x1, stride 1, no padding, one group)
// whose result only a depthwise 3x3 convolution (stride 1, padding 1) reads: oneDNN
// fuses the depthwise step as a post-op, so the wide intermediate of an inverted
// residual block (MobileNet's expand -> depthwise) need not go through memory.
//
// unary: relu, relu6/hardtanh, gelu (none|tanh), silu, sigmoid, hardswish, hardsigmoid,
// tanh, leaky_relu. Batch norm (eval, constant statistics) is folded into the conv's
// weight and bias at compile time. Each value between the anchor and the last op must
// be read by the next op only, so nothing outside needs an intermediate result.
//
// One parser serves both steps: claim() grows chains from anchors over the block
// (growChain), and compile() parses the nested block of the delegate node back into the
// same FusionChain (parseChain).
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <ATen/core/Tensor.h>

namespace brisk {
class Node;
class Block;
class Value;
class Graph;
}  // namespace brisk

namespace brisk::onednn {

enum class Anchor { kConv, kLinear };

// A oneDNN eltwise post-op as ATen's mkldnn fusion ops name it ("relu", "swish", ...).
struct Unary {
  std::string attr = "none";
  std::vector<double> scalars;
  std::optional<std::string> algorithm;
  std::string str() const;
};

struct FusionChain {
  Anchor anchor;
  std::vector<const Node*> nodes;  // in order: anchor first
  const Node* bn = nullptr;
  const Node* add = nullptr;
  size_t add_other = 0;  // which input of `add` is the other operand
  Unary unary;           // after the anchor (and bn), or after the add when `add` is set
  // The fused depthwise convolution after a 1x1 anchor, with its own batch norm and
  // activation; null when the chain has none.
  const Node* dw = nullptr;
  const Node* dw_bn = nullptr;
  Unary dw_unary;
  std::string str() const;
};

// "aten::relu_" -> "aten::relu", "aten::add_.Tensor" -> "aten::add.Tensor"; other keys
// unchanged.
std::string outOfPlaceKey(const std::string& key);

// Per-op classifiers (in-place forms included: see outOfPlaceKey).
std::optional<Anchor> anchorKind(const Node& n);
std::optional<Unary> unaryOf(const Node& n);
bool isBatchNorm(const Node& n);
bool isAdd(const Node& n);

// Whether `dw` is a depthwise 3x3 convolution (stride 1, padding 1, no dilation) that can
// follow the 1x1 convolution `anchor` (stride 1, no padding, one group) as a fused step.
bool fusesDepthwise(const Node& anchor, const Node& dw);

// The longest chain that starts at `anchor` whose intermediate values only the next op
// reads and that takes no node of `taken`; nullopt when `anchor` is not an anchor this
// backend can run.
std::optional<FusionChain> growChain(const Node& anchor,
                                     const std::unordered_set<const Node*>& taken);

// Parses nodes (in order) into a chain; nullopt, with the reason in *why, when they are
// not one. compile() uses it on a delegate's nested block.
std::optional<FusionChain> parseChain(const std::vector<const Node*>& nodes, std::string* why = nullptr);

}  // namespace brisk::onednn
