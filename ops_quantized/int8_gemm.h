#pragma once
// y [m, n] = x [m, k] W^T + b with W quantized to int8 once and x quantized per call:
// the dynamic-int8 GEMM of the recurrent layers (rnn_int8.h), which call it once per time
// step on a few rows, where fbgemm's dynamic linear would allocate its result and its
// quantized input on every call. No torch: a unit test checks it directly.
//
// Numerics:
//   W   per output channel, symmetric: s_w[j] = max_k |W[j, k]| / 127, q = round(W / s_w)
//       in [-127, 127] (a zero row gets s_w = 1);
//   x   per row, asymmetric uint8 over the row's own range extended to 0:
//       s_x = (max - min) / 255, zp = round(-min / s_x), q = clamp(round(x / s_x) + zp);
//   y   s_x s_w[j] (sum_k qx qw - zp sum_k qw) + b[j], the integer sum exact in int32.
// Per-row activation scales, not per tensor as fbgemm's dynamic linear: a step's rows are
// independent sequences, and one row's range should not coarsen another's. The integer
// part is exact on both paths, so the AVX-512 VNNI path (vpdpbusd: u8 x s8 products summed
// in int32, no saturation) and the portable loop give the same bits.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace brisk::ops_quantized {

class Int8Linear {
 public:
  // Inner sizes above this could overflow the int32 sum (255 * 127 * k).
  static constexpr int64_t kMaxK = 16384;

  // `w` row-major [n, k] fp32; `bias` n floats or null. Requires 1 <= k <= kMaxK, n >= 1.
  Int8Linear(const float* w, int64_t n, int64_t k, const float* bias);

  int64_t n() const { return n_; }
  int64_t k() const { return k_; }

  // Bytes of scratch run() needs for m rows (the quantized rows and their parameters).
  size_t scratchBytes(int64_t m) const;

  // y = x W^T + b; x [m, k] and y [m, n] row-major contiguous, not overlapping. `scratch`:
  // scratchBytes(m) bytes, any alignment. `vnni`: the AVX-512 VNNI path (requires
  // hasVnni()); false: the portable loop.
  void run(const float* x, int64_t m, float* y, uint8_t* scratch, bool vnni) const;
  void run(const float* x, int64_t m, float* y, uint8_t* scratch) const { run(x, m, y, scratch, hasVnni()); }

  // The weight as dequantized (q * s_w), row-major [n, k]: what the integer path multiplies.
  std::vector<float> dequantizedWeight() const;

  // Whether this CPU has AVX-512 F, BW and VNNI.
  static bool hasVnni();

 private:
  int64_t n_, k_, kp_, np_;  // kp_: k rounded up to 4; np_: n rounded up to 64
  // Packed for vpdpbusd: per group of 64 outputs, per 4 inputs, 4 x 16 outputs x 4 bytes.
  std::vector<int8_t> packed_;
  std::vector<float> scale_;   // s_w, np_ entries (zero past n)
  std::vector<int32_t> colsum_;  // sum_k q[j, k], np_ entries
  std::vector<float> bias_;    // np_ entries (zero without a bias)
};

}  // namespace brisk::ops_quantized
