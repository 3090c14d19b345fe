#pragma once
// Direct 3x3 depthwise convolution over uint8 channels-last (NHWC) activations with int8
// weights and a requantized uint8 result: the depthwise layers of PT2E int8 programs
// (mobilenet_v2's 17 of them).
//
// Why it exists: oneDNN 3.2's int8 depthwise kernels put one tap in each 32-bit lane of
// a VNNI dot product (vpdpbusd multiplies four byte pairs per lane), so three quarters
// of the multiplier sits idle. Here each lane holds one channel's three kernel rows of
// one input column (plus a zero byte), so one vpdpbusd adds three taps of 16 channels,
// and three of them (one per kernel column) finish an output.
//
// Per output row and block of 64 channels (32 for a layer or tail of at most 32):
//   1. interleave: for every input column the window reaches, the three input rows'
//      bytes of the block become four vectors of [row0, row1, row2, 0] per channel
//      (byte unpacks, in 128-bit lanes, so the channels land in a fixed permuted order);
//      padded rows and columns read the source's zero point, the value of a real 0;
//   2. accumulate: per output column, 3 x 4 vpdpbusd against the weights, packed at
//      load in the same permuted order (held in registers across the row);
//   3. requantize: q = acc * scale[c] + shift[c] in fp32, rounded to nearest even,
//      saturated by the packs that also undo the permutation, and clamped to [lo, hi].
// The accumulator is exact (9 * 255 * 127 < 2^24); the fp32 step is where results can
// differ from oneDNN's (its own order of the same scale, bias and zero-point terms) by
// one quantization step at a rounding boundary.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops_cpu/simd/window_dim.h"

namespace brisk::ops_cpu::out {

// True when this CPU has AVX-512 BW and VNNI (checked once).
bool depthwiseInt8Available();

// The per-layer constants, packed once.
//   acc[c]  = sum over the 9 taps of xq * w[c]   (padded taps read `pad_value`)
//   q[c]    = clamp(round(acc[c] * scale[c] + shift[c]), lo, hi)
// A PT2E chain's terms fold into these: scale = s_x * s_w[c] / s_y, shift = (bias[c] -
// s_x * s_w[c] * zp_x * sum(w[c])) / s_y + zp_y, pad_value = zp_x, and [lo, hi] the
// activation's clamp in the quantized domain (0..255 when there is none).
class DepthwiseInt8 {
 public:
  // `weight`: channels x 3 x 3 int8, row-major; `scale`, `shift`: one per channel.
  DepthwiseInt8(const int8_t* weight, const float* scale, const float* shift, int64_t channels, uint8_t pad_value,
                uint8_t lo, uint8_t hi);

  // Whether a geometry is one this kernel runs: kernel 3, dilation 1, stride 1 or 2,
  // padding at most 2, in both dimensions.
  static bool supports(const WindowDim& h, const WindowDim& w);
  // Whether every acc * scale + shift converts to int32 (finite, |q| < 2^31), which the
  // saturating packs then clamp to 0..255; a layer where one might not is not run here.
  static bool fitsInt32(const float* scale, const float* shift, int64_t channels);
  // Bytes of scratch one thread needs for rows of width `w` (run()'s `scratch`).
  static size_t scratchBytes(const WindowDim& w);

  // Output rows [begin, end) of the N x OH rows (row r: image r / h.out, output row
  // r % h.out) from `x` (N x h.in x w.in x channels) into `y` (N x h.out x w.out x
  // channels); `scratch` holds scratchBytes(w) bytes, aligned to 64. Single-threaded:
  // callers split rows across threads. Requires depthwiseInt8Available() and supports().
  void run(const uint8_t* x, uint8_t* y, int64_t begin, int64_t end, const WindowDim& h, const WindowDim& w,
           uint8_t* scratch) const;

  int64_t channels() const { return channels_; }

 private:
  // A run of channels computed together: 64 on 512-bit vectors, or 32 on 256-bit ones.
  struct Block {
    int64_t first, width, live;  // first channel, vector width in channels, channels stored
    size_t packed;               // offset of its constants in packed_
  };
  int64_t channels_;
  uint8_t pad_value_, lo_, hi_;
  std::vector<Block> blocks_;
  // Per block: 12 vectors of weights (kernel column-major, then the four permuted
  // channel groups), then 4 of scales and 4 of shifts, `width` bytes each.
  std::vector<uint8_t> packed_;
};

}  // namespace brisk::ops_cpu::out
