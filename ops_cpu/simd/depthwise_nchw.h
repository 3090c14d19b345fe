#pragma once
// Direct depthwise convolution over contiguous NCHW float planes (groups == in channels
// == out channels, one filter per channel): reads the NCHW input and writes the NCHW
// output directly, with no temporaries.
//
// Why it exists: ATen runs a depthwise conv through oneDNN, which first reorders the
// NCHW input into a blocked layout (nChw8c/nChw16c), computes into a blocked output and
// reorders that back. At MobileNetV2 batch 8 the stride-2 conv over 96x112x112 holds
// the input (38.5 MB), its blocked copy (38.5 MB) and two 9.6 MB outputs at once: that
// one step sets the model's whole slab (96 MB) and so its peak memory. Here the step
// needs the input and the output only (48 MB), and no reorder traffic.
//
// Same values as oneDNN, bit for bit: its depthwise kernels (jit_uni_dw_conv) start
// each output from the bias (or +0) and add every tap that falls inside the input with
// one fused multiply-add, rows outer, columns inner; taps in the padding are skipped.
// This kernel performs that exact sequence of roundings per output element (the vector
// lanes only compute 8 outputs side by side), so it runs only where the CPU has FMA
// (depthwiseDirectAvailable()); elsewhere oneDNN uses other instructions and callers
// keep ATen's path.
//
// Vectorized (strides 1 and 2, kernels up to 8 wide): 8 outputs per vector (AVX2),
// interior vectors (every tap inside the row) four at a time for independent FMA
// chains; vectors at the borders and on narrow planes apply each tap only to the lanes
// it falls inside (masked loads and a blend), so they too perform the same sequence.
// Other geometries run it one output at a time.
#include <cstdint>

#include "ops_cpu/simd/window_dim.h"

namespace brisk::ops_cpu::out {

// One spatial dimension of a convolution. `out` must be
// (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1, and >= 1.
using ConvDim = WindowDim;

// True when this CPU has AVX2 and FMA (checked once).
bool depthwiseDirectAvailable();

// Planes [begin, end) of an N x C x H x W input (plane p is channel p % channels of
// image p / channels), each h.in x w.in, into the matching h.out x w.out planes of
// `out`. `weight` is C x h.kernel x w.kernel, `bias` C values or null. `out` must not
// overlap `in`. Single-threaded: callers split planes across threads. Requires
// depthwiseDirectAvailable().
void depthwiseConv2dPlanes(const float* in, const float* weight, const float* bias, float* out, int64_t begin,
                           int64_t end, int64_t channels, const ConvDim& h, const ConvDim& w);

}  // namespace brisk::ops_cpu::out
