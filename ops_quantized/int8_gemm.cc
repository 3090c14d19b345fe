// The dynamic-int8 GEMM; see int8_gemm.h.
#include "ops_quantized/int8_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace brisk::ops_quantized {
namespace {

constexpr int64_t kGroup = 64;  // outputs per packed group: four zmm of 16 int32 sums

int64_t roundUp(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// Byte offset of W[j, k] in the packed layout.
int64_t packedIndex(int64_t j, int64_t k, int64_t kp) {
  const int64_t group = j / kGroup, block = (j % kGroup) / 16, lane = j % 16;
  return ((group * (kp / 4) + k / 4) * 4 + block) * 64 + lane * 4 + k % 4;
}

struct RowParams {
  float scale;
  int32_t zero_point;
};

// One row to uint8 over its own range extended to 0 (int8_gemm.h); the padding bytes
// past k are 0, so with W's zero padding they add nothing.
RowParams quantizeRow(const float* x, int64_t k, int64_t kp, uint8_t* q) {
  float lo = 0.f, hi = 0.f;
  for (int64_t i = 0; i < k; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  float scale = (hi - lo) / 255.f;
  if (!(scale > 0.f) || !std::isfinite(scale)) scale = 1.f;  // all zeros, or non-finite input
  const float inv = 1.f / scale;
  const int32_t zp = static_cast<int32_t>(std::clamp(std::nearbyint(-lo * inv), 0.f, 255.f));
  const float fzp = static_cast<float>(zp);
  for (int64_t i = 0; i < k; ++i) {
    const float v = std::nearbyint(x[i] * inv) + fzp;
    q[i] = static_cast<uint8_t>(v >= 0.f ? (v <= 255.f ? v : 255.f) : 0.f);  // NaN -> 0
  }
  std::memset(q + k, 0, kp - k);
  return {scale, zp};
}

// y[j] = s_x s_w[j] (acc[j] - zp colsum[j]) + b[j] for j < n.
inline void dequantize(const int32_t* acc, const RowParams& p, const float* scale, const int32_t* colsum,
                       const float* bias, int64_t n, float* y) {
  for (int64_t j = 0; j < n; ++j)
    y[j] = static_cast<float>(acc[j] - p.zero_point * colsum[j]) * (p.scale * scale[j]) + bias[j];
}

void gemmPortable(const uint8_t* xq, const RowParams* params, int64_t m, const int8_t* packed, int64_t kp,
                  int64_t np, const float* scale, const int32_t* colsum, const float* bias, int64_t n, float* y) {
  int32_t acc[kGroup];
  for (int64_t r = 0; r < m; ++r) {
    const uint8_t* xr = xq + r * kp;
    for (int64_t g = 0; g < np; g += kGroup) {
      std::fill(acc, acc + kGroup, 0);
      for (int64_t k = 0; k < kp; ++k)
        for (int64_t j = 0; j < kGroup; ++j)
          acc[j] += static_cast<int32_t>(xr[k]) * packed[packedIndex(g + j, k, kp)];
      dequantize(acc, params[r], scale + g, colsum + g, bias + g, std::min(kGroup, n - g), y + r * n + g);
    }
  }
}

// MR rows x 64 outputs per tile: 4 * MR accumulators, each step loads 256 weight bytes
// once for all MR rows.
template <int MR>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void tileVnni(const uint8_t* xq, int64_t kp,
                                                                      const int8_t* w, __m512i (&acc)[MR][4]) {
  for (int i = 0; i < MR; ++i)
    for (int b = 0; b < 4; ++b) acc[i][b] = _mm512_setzero_si512();
  for (int64_t k4 = 0; k4 < kp / 4; ++k4, w += 256) {
    const __m512i w0 = _mm512_loadu_si512(w), w1 = _mm512_loadu_si512(w + 64), w2 = _mm512_loadu_si512(w + 128),
                  w3 = _mm512_loadu_si512(w + 192);
    for (int i = 0; i < MR; ++i) {
      int32_t four;
      std::memcpy(&four, xq + i * kp + k4 * 4, 4);
      const __m512i a = _mm512_set1_epi32(four);
      acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], a, w0);
      acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], a, w1);
      acc[i][2] = _mm512_dpbusd_epi32(acc[i][2], a, w2);
      acc[i][3] = _mm512_dpbusd_epi32(acc[i][3], a, w3);
    }
  }
}

template <int MR>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void rowsVnni(const uint8_t* xq, const RowParams* params,
                                                                      const int8_t* packed, int64_t kp, int64_t np,
                                                                      const float* scale, const int32_t* colsum,
                                                                      const float* bias, int64_t n, float* y) {
  for (int64_t g = 0; g < np; g += kGroup) {
    __m512i acc[MR][4];
    tileVnni<MR>(xq, kp, packed + g * kp, acc);
    const int64_t cols = std::min(kGroup, n - g);
    for (int i = 0; i < MR; ++i) {
      const __m512 sx = _mm512_set1_ps(params[i].scale);
      const __m512i zp = _mm512_set1_epi32(params[i].zero_point);
      float* yr = y + i * n + g;
      for (int b = 0; b < 4 && b * 16 < cols; ++b) {
        const int64_t left = cols - b * 16;
        const __mmask16 mask = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
        const __m512i corrected =
            _mm512_sub_epi32(acc[i][b], _mm512_mullo_epi32(zp, _mm512_loadu_si512(colsum + g + b * 16)));
        const __m512 s = _mm512_mul_ps(sx, _mm512_loadu_ps(scale + g + b * 16));
        // Two roundings, as the portable loop: the product, then the bias added.
        const __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(corrected), s),
                                       _mm512_loadu_ps(bias + g + b * 16));
        _mm512_mask_storeu_ps(yr + b * 16, mask, v);
      }
    }
  }
}

void gemmVnni(const uint8_t* xq, const RowParams* params, int64_t m, const int8_t* packed, int64_t kp, int64_t np,
              const float* scale, const int32_t* colsum, const float* bias, int64_t n, float* y) {
  int64_t r = 0;
  for (; r + 4 <= m; r += 4)
    rowsVnni<4>(xq + r * kp, params + r, packed, kp, np, scale, colsum, bias, n, y + r * n);
  switch (m - r) {
    case 3: rowsVnni<3>(xq + r * kp, params + r, packed, kp, np, scale, colsum, bias, n, y + r * n); break;
    case 2: rowsVnni<2>(xq + r * kp, params + r, packed, kp, np, scale, colsum, bias, n, y + r * n); break;
    case 1: rowsVnni<1>(xq + r * kp, params + r, packed, kp, np, scale, colsum, bias, n, y + r * n); break;
    default: break;
  }
}

}  // namespace

Int8Linear::Int8Linear(const float* w, int64_t n, int64_t k, const float* bias)
    : n_(n), k_(k), kp_(roundUp(k, 4)), np_(roundUp(n, kGroup)) {
  packed_.assign(np_ * kp_, 0);
  scale_.assign(np_, 0.f);
  colsum_.assign(np_, 0);
  bias_.assign(np_, 0.f);
  for (int64_t j = 0; j < n; ++j) {
    const float* row = w + j * k;
    float amax = 0.f;
    for (int64_t i = 0; i < k; ++i) amax = std::max(amax, std::fabs(row[i]));
    const float s = amax > 0.f && std::isfinite(amax) ? amax / 127.f : 1.f;
    scale_[j] = s;
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) {
      const int8_t q = static_cast<int8_t>(std::clamp(std::nearbyint(row[i] / s), -127.f, 127.f));
      packed_[packedIndex(j, i, kp_)] = q;
      sum += q;
    }
    colsum_[j] = sum;
    if (bias) bias_[j] = bias[j];
  }
}

size_t Int8Linear::scratchBytes(int64_t m) const {
  return static_cast<size_t>(roundUp(m * kp_, 64)) + static_cast<size_t>(m) * sizeof(RowParams);
}

void Int8Linear::run(const float* x, int64_t m, float* y, uint8_t* scratch, bool vnni) const {
  uint8_t* xq = scratch;
  auto* params = reinterpret_cast<RowParams*>(scratch + roundUp(m * kp_, 64));
  for (int64_t r = 0; r < m; ++r) params[r] = quantizeRow(x + r * k_, k_, kp_, xq + r * kp_);
  if (vnni)
    gemmVnni(xq, params, m, packed_.data(), kp_, np_, scale_.data(), colsum_.data(), bias_.data(), n_, y);
  else
    gemmPortable(xq, params, m, packed_.data(), kp_, np_, scale_.data(), colsum_.data(), bias_.data(), n_, y);
}

std::vector<float> Int8Linear::dequantizedWeight() const {
  std::vector<float> w(n_ * k_);
  for (int64_t j = 0; j < n_; ++j)
    for (int64_t i = 0; i < k_; ++i) w[j * k_ + i] = packed_[packedIndex(j, i, kp_)] * scale_[j];
  return w;
}

bool Int8Linear::hasVnni() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
  }();
  return yes;
}

}  // namespace brisk::ops_quantized
