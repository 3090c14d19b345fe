#pragma once
// How activations pass between the onednn backend's convolution partitions: read from
// the graph alone, at compile time, so that a producer and each of its readers (compiled
// separately) agree on the layout and type of the tensor between them.
//
// - A convolution partition's result that only convolution partitions read (as source
//   or residual) "flows": no reader outside the backend sees it. In bf16 mode it stays
//   bf16.
// - A flowing result may also stay in oneDNN's blocked layout (nChw16c / nChw8c), which
//   oneDNN 3.2's kernels read and write much faster than NHWC on memory-bound
//   convolutions (Zen 4, one thread, batch 8: a depthwise 3x3 over 96 channels at
//   112x112 4.9 -> 3.0 ms, a 1x1 32 -> 16 at 112x112 2.0 -> 0.9 ms), while its NHWC
//   kernels (brgconv) are faster on dense 3x3 convolutions of 128 channels and more
//   (resnet18 at batch 1: 3-15% per layer). A partition computes blocked when its
//   result flows, its convolution is of the first kind, and its source arrives blocked
//   (a blocked partition made it), or is an image of few channels that oneDNN reads
//   planar straight into a blocked result (the stem), or is another input of the model,
//   which arrives NCHW and which oneDNN converts to blocked twice as fast as to NHWC.
//   Regions of blocked partitions thus start at a stem or a model input. Where a
//   region's result leaves the backend, the partition that makes it computes blocked
//   too if its convolution is of the first kind, and converts its result on the way out
//   (from nChw16c to NCHW in brisk's own transpose, 1.6-2.7 us for 24-48 channels at
//   28x28); otherwise it converts its source to NHWC.
#include <cstdint>

namespace brisk {
class Node;
class Value;
}  // namespace brisk

namespace brisk::onednn {

// A convolution partition of this backend (a brisk::delegate node).
bool isConvPartition(const Node& n);

// Every reader of `v`, a convolution partition's result, is a convolution partition of
// the same block.
bool flowsBetweenConvs(const Value* v);

// Under precision bf16, whether convolution partition `partition` computes in bf16: all
// do but a stem (a dense convolution over fewer than 8 channels, an RGB image) unless
// `stem_bf16`. oneDNN 3.2's bf16 kernels sum channel pairs in vdpbf16ps, and for 3
// channels without AMX its kernel took 2.4x its fp32 one (resnet18's stem at batch 8,
// Xeon with AVX512_BF16, one thread: 33.0 vs 13.6 ms), so the stem stays fp32, which is
// also exact for the model's input.
bool computesBf16(const Node& partition, bool stem_bf16);

// Whether `v`, a convolution partition's result, passes between partitions that all
// compute in bf16 (flowsBetweenConvs and computesBf16 on both ends): it stays bf16.
bool flowsInBf16(const Value* v, bool stem_bf16);

// Whether convolution partition `partition` computes in the blocked layout (above),
// and so writes its result blocked.
bool computesBlocked(const Node& partition);

// Whether convolution partition `partition` ends a blocked region: its source arrives
// blocked and its convolution prefers that layout, but its result leaves the backend. It
// computes blocked and converts the result on the way out.
bool exitsBlocked(const Node& partition);

// Whether `v` reaches its convolution-partition readers in the blocked layout.
bool arrivesBlocked(const Value* v);

// The channel count of convolution partition `partition`'s result (its last
// convolution's), which a blocked tensor does not show: its channel blocks may end in
// padding.
int64_t resultChannels(const Node& partition);

// Whether every reader of `v`, a convolution partition's result, keeps it NHWC as it
// is: a convolution partition, or an op whose ATen kernel handles channels-last input
// (pooling, elementwise, concatenation). Anything else (a view, the model's output)
// gets NCHW.
bool readersTakeNhwc(const Value* v);

}  // namespace brisk::onednn
