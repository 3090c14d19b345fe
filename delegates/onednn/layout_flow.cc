#include "delegates/onednn/layout_flow.h"

#include <string>
#include <unordered_set>

#include "core/graph/graph.h"
#include "core/kernels/delegate.h"
#include "delegates/onednn/fusion_chain.h"
#include "delegates/onednn/quantized_chain.h"

namespace brisk::onednn {
namespace {

// Every read of `v` is by a node of `block` that `pred` accepts: a block return is not
// one, and a read nested in a node's block counts as that node's (the nodes of a
// partition read outer values directly).
template <class Pred>
bool everyReader(const Value* v, const Block* block, Pred pred) {
  for (const Use& u : v->uses()) {
    const Node* reader = u.user ? u.user->enclosingNodeIn(block) : nullptr;
    if (!reader || !pred(*reader)) return false;
  }
  return true;
}

// The partition's convolution: its nested block's first node.
const Node& anchorOf(const Node& partition) { return *partition.block(0)->nodes().front(); }
int64_t groupsOf(const Node& conv) { return conv.input(conv.key() == "aten::conv2d" ? 6 : 8)->constant().toInt(); }

// Depthwise, pointwise, or dense with few input channels: the convolutions whose
// blocked kernels measured at least as fast as the NHWC ones (layout_flow.h).
bool prefersBlocked(const Node& conv) {
  const at::Tensor& w = conv.input(1)->constant().toTensor();
  const int64_t groups = groupsOf(conv), in_channels = w.size(1) * groups;
  const bool depthwise = groups > 1 && groups == in_channels && w.size(0) % groups == 0;
  const bool pointwise = w.size(2) == 1 && w.size(3) == 1 && groups == 1;
  return depthwise || pointwise || (groups == 1 && in_channels < 128);
}

// A dense convolution over fewer than 8 channels: oneDNN reads such a source planar
// (NCHW) straight into a blocked result.
bool readsImage(const Node& conv) {
  const at::Tensor& w = conv.input(1)->constant().toTensor();
  return groupsOf(conv) == 1 && w.size(1) < 8;
}

// An input of the model (a parameter of the graph's top block): it arrives NCHW, and
// oneDNN converts NCHW to its blocked layout about twice as fast as to NHWC (64 channels
// at 28x28, Zen 4, one thread: 4.7 vs 9.2 us), so a region may start right there.
bool isModelInput(const Value* v) {
  return !v->producer() && !v->isConstant() && v->owningBlock() && !v->owningBlock()->owningNode();
}

// Whether `reader` keeps an NHWC convolution result as it is (readersTakeNhwc).
bool takesNhwc(const Node& reader) {
  static const std::unordered_set<std::string> kOps = {
      "aten::max_pool2d", "aten::max_pool2d_with_indices", "aten::avg_pool2d", "aten::adaptive_avg_pool2d",
      "aten::relu",       "aten::relu6",                   "aten::hardtanh",   "aten::add.Tensor",
      "aten::mul.Tensor", "aten::sigmoid",                 "aten::silu",       "aten::hardswish",
      "aten::cat",        "aten::mean.dim",
      // They read only the logical sizes, which an NHWC tensor has as an NCHW one does
      // (EfficientNet's squeeze-excite checks the rank before it pools).
      "aten::size",       "aten::size.int", "aten::dim",
      // PT2E's activation quantization: elementwise, the result in the input's layout.
      "quantized_decomposed::quantize_per_tensor", "quantized_decomposed::quantize_per_tensor.tensor",
      "quantized_decomposed::dequantize_per_tensor", "quantized_decomposed::dequantize_per_tensor.tensor"};
  if (reader.kind() == kDelegateKind) return isConvPartition(reader) || isQuantizedPartition(reader);
  return kOps.count(outOfPlaceKey(reader.key())) != 0;  // in-place forms keep the layout too
}

// What makes a partition blocked apart from its source: its result flows, and its
// convolution is of the kind whose blocked kernels are faster.
bool blockedLocally(const Node& p) {
  return isConvPartition(p) && p.outputs().size() == 1 && flowsBetweenConvs(p.output(0)) &&
         prefersBlocked(anchorOf(p));
}

// Whether the blocked layout goes on for `depth` more partitions after `p` along some
// chain of sources. A stem starts a region only then: a region that ends right after it
// would convert back what it saved, and a longer one reaches the memory-bound
// convolutions that gain (MobileNet's stem -> depthwise -> pointwise; not regnet's stem
// -> pointwise -> grouped, nor EfficientNet's stem -> depthwise -> squeeze-excite).
bool continuesBlocked(const Node& p, int depth) {
  if (depth == 0) return true;
  for (const Use& u : p.output(0)->uses()) {
    const Node* reader = u.user ? u.user->enclosingNodeIn(p.owningBlock()) : nullptr;
    if (reader && blockedLocally(*reader) && anchorOf(*reader).input(0) == p.output(0) &&
        continuesBlocked(*reader, depth - 1))
      return true;
  }
  return false;
}

}  // namespace

bool isConvPartition(const Node& n) {
  if (n.kind() != kDelegateKind) return false;
  auto it = n.attributes().find(kDelegateBackendAttr);
  if (it == n.attributes().end() || it->second.toStringRef() != "onednn") return false;
  return anchorKind(anchorOf(n)) == Anchor::kConv;
}

bool flowsBetweenConvs(const Value* v) {
  const Node* producer = v->producer();
  return producer && isConvPartition(*producer) && everyReader(v, producer->owningBlock(), isConvPartition);
}

bool computesBf16(const Node& partition, bool stem_bf16) { return stem_bf16 || !readsImage(anchorOf(partition)); }

bool flowsInBf16(const Value* v, bool stem_bf16) {
  const auto bf16 = [stem_bf16](const Node& n) { return isConvPartition(n) && computesBf16(n, stem_bf16); };
  const Node* producer = v->producer();
  return producer && bf16(*producer) && everyReader(v, producer->owningBlock(), bf16);
}

bool computesBlocked(const Node& partition) {
  // Back along the sources: each partition of a blocked region has a blocked producer,
  // up to a stem.
  for (const Node* p = &partition;;) {
    if (!blockedLocally(*p)) return false;
    const Node& conv = anchorOf(*p);
    if (readsImage(conv)) return continuesBlocked(*p, 2);
    if (isModelInput(conv.input(0))) return true;
    p = conv.input(0)->producer();
    if (!p) return false;
  }
}

bool exitsBlocked(const Node& partition) {
  if (!isConvPartition(partition) || partition.outputs().size() != 1 || flowsBetweenConvs(partition.output(0)))
    return false;
  const Node& conv = anchorOf(partition);
  return prefersBlocked(conv) && arrivesBlocked(conv.input(0));
}

bool arrivesBlocked(const Value* v) {
  const Node* producer = v->producer();
  return producer && isConvPartition(*producer) && computesBlocked(*producer);
}

int64_t resultChannels(const Node& partition) {
  const Node* last = nullptr;
  for (const Node* n : partition.block(0)->nodes())
    if (anchorKind(*n) == Anchor::kConv) last = n;
  return last->input(1)->constant().toTensor().size(0);
}

bool readersTakeNhwc(const Value* v) {
  const Node* producer = v->producer();
  return producer && everyReader(v, producer->owningBlock(), takesNhwc);
}

}  // namespace brisk::onednn
