// Direct 3x3 depthwise int8 convolution over NHWC; see depthwise_int8_nhwc.h for the
// scheme and its arithmetic.
#include "ops_cpu/simd/depthwise_int8_nhwc.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#pragma GCC diagnostic ignored "-Wpsabi"

namespace brisk::ops_cpu::out {

bool depthwiseInt8Available() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bw") != 0 && __builtin_cpu_supports("avx512vnni") != 0;
  }();
  return yes;
}

namespace {

constexpr size_t kColumnBytes = 4 * 64;  // one interleaved column of a wide block
constexpr int kPackedVectors = 12 + 4 + 4;  // weights, scales, shifts

// The channel (within its block) of byte group `j` of 128-bit lane `l` of permuted
// vector `q`: what unpacking bytes, then words, in 128-bit lanes produces.
constexpr int64_t channelOf(int q, int l, int j) { return 16 * l + 4 * q + j; }

int64_t columnsOf(const WindowDim& w) { return (w.out - 1) * w.stride + 3; }

}  // namespace

DepthwiseInt8::DepthwiseInt8(const int8_t* weight, const float* scale, const float* shift, int64_t channels,
                             uint8_t pad_value, uint8_t lo, uint8_t hi)
    : channels_(channels), pad_value_(pad_value), lo_(lo), hi_(hi) {
  // 64-channel blocks while more than 32 channels are left, then one 32-channel block:
  // a 32-channel layer (or tail) on 256-bit vectors does not compute 32 idle channels.
  size_t offset = 0;
  for (int64_t first = 0; first < channels;) {
    const int64_t width = channels - first > 32 ? 64 : 32;
    blocks_.push_back({first, width, std::min(width, channels - first), offset});
    offset += static_cast<size_t>(kPackedVectors * width);
    first += width;
  }
  packed_.assign(offset, 0);
  for (const Block& b : blocks_) {
    uint8_t* base = packed_.data() + b.packed;
    const size_t vec = static_cast<size_t>(b.width);
    for (int q = 0; q < 4; ++q)
      for (int l = 0; l < b.width / 16; ++l)
        for (int j = 0; j < 4; ++j) {
          const int64_t c = b.first + channelOf(q, l, j);
          if (c >= channels) continue;  // a tail channel: zero weight, its output is not stored
          const size_t lane = static_cast<size_t>(l * 16 + j * 4);
          for (int kw = 0; kw < 3; ++kw)
            for (int kh = 0; kh < 3; ++kh)
              base[(kw * 4 + q) * vec + lane + kh] = static_cast<uint8_t>(weight[c * 9 + kh * 3 + kw]);
          std::memcpy(base + (12 + q) * vec + lane, scale + c, sizeof(float));
          std::memcpy(base + (16 + q) * vec + lane, shift + c, sizeof(float));
        }
  }
}

bool DepthwiseInt8::supports(const WindowDim& h, const WindowDim& w) {
  for (const WindowDim* d : {&h, &w})
    if (d->kernel != 3 || d->dilation != 1 || d->stride < 1 || d->stride > 2 || d->pad < 0 || d->pad > 2 ||
        d->out < 1 || d->out != (d->in + 2 * d->pad - 3) / d->stride + 1)
      return false;
  return true;
}

bool DepthwiseInt8::fitsInt32(const float* scale, const float* shift, int64_t channels) {
  constexpr double kMaxAcc = 9.0 * 255 * 128;  // |acc| over 9 taps of uint8 x int8
  for (int64_t c = 0; c < channels; ++c)
    if (!(std::fabs(static_cast<double>(scale[c])) * kMaxAcc + std::fabs(static_cast<double>(shift[c])) < 2e9))
      return false;
  return true;
}

size_t DepthwiseInt8::scratchBytes(const WindowDim& w) { return static_cast<size_t>(columnsOf(w)) * kColumnBytes; }

#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")

namespace {

#define BRISK_DW8_INLINE inline __attribute__((always_inline))

// The two block widths' instructions under one set of names, so one body serves both.
struct Wide {  // 64 channels, 512-bit
  using I = __m512i;
  using F = __m512;
  using M = __mmask64;
  static constexpr int kBytes = 64;
  static BRISK_DW8_INLINE I set1(uint8_t v) { return _mm512_set1_epi8(static_cast<char>(v)); }
  static BRISK_DW8_INLINE I zero() { return _mm512_setzero_si512(); }
  static BRISK_DW8_INLINE I load(const void* p) { return _mm512_load_si512(p); }
  static BRISK_DW8_INLINE I loadu(const void* p) { return _mm512_loadu_si512(p); }
  static BRISK_DW8_INLINE F loadf(const void* p) { return _mm512_loadu_ps(p); }
  static BRISK_DW8_INLINE I loadMasked(I fill, M m, const uint8_t* p) { return _mm512_mask_loadu_epi8(fill, m, p); }
  static BRISK_DW8_INLINE void store(void* p, I v) { _mm512_store_si512(p, v); }
  static BRISK_DW8_INLINE void storeMasked(uint8_t* p, M m, I v) { _mm512_mask_storeu_epi8(p, m, v); }
  static BRISK_DW8_INLINE I lo8(I a, I b) { return _mm512_unpacklo_epi8(a, b); }
  static BRISK_DW8_INLINE I hi8(I a, I b) { return _mm512_unpackhi_epi8(a, b); }
  static BRISK_DW8_INLINE I lo16(I a, I b) { return _mm512_unpacklo_epi16(a, b); }
  static BRISK_DW8_INLINE I hi16(I a, I b) { return _mm512_unpackhi_epi16(a, b); }
  static BRISK_DW8_INLINE I dot(I acc, I a, I b) { return _mm512_dpbusd_epi32(acc, a, b); }
  static BRISK_DW8_INLINE I requant(I acc, F scale, F shift) {
    return _mm512_cvtps_epi32(_mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), scale, shift));
  }
  static BRISK_DW8_INLINE I packBytes(I a, I b, I c, I d) {
    return _mm512_packus_epi16(_mm512_packs_epi32(a, b), _mm512_packs_epi32(c, d));
  }
  static BRISK_DW8_INLINE I clamp(I v, I lo, I hi) { return _mm512_min_epu8(_mm512_max_epu8(v, lo), hi); }
};

struct Narrow {  // 32 channels, 256-bit (AVX-512 VL)
  using I = __m256i;
  using F = __m256;
  using M = __mmask32;
  static constexpr int kBytes = 32;
  static BRISK_DW8_INLINE I set1(uint8_t v) { return _mm256_set1_epi8(static_cast<char>(v)); }
  static BRISK_DW8_INLINE I zero() { return _mm256_setzero_si256(); }
  static BRISK_DW8_INLINE I load(const void* p) { return _mm256_load_si256(static_cast<const I*>(p)); }
  static BRISK_DW8_INLINE I loadu(const void* p) { return _mm256_loadu_si256(static_cast<const I*>(p)); }
  static BRISK_DW8_INLINE F loadf(const void* p) { return _mm256_loadu_ps(static_cast<const float*>(p)); }
  static BRISK_DW8_INLINE I loadMasked(I fill, M m, const uint8_t* p) { return _mm256_mask_loadu_epi8(fill, m, p); }
  static BRISK_DW8_INLINE void store(void* p, I v) { _mm256_store_si256(static_cast<I*>(p), v); }
  static BRISK_DW8_INLINE void storeMasked(uint8_t* p, M m, I v) { _mm256_mask_storeu_epi8(p, m, v); }
  static BRISK_DW8_INLINE I lo8(I a, I b) { return _mm256_unpacklo_epi8(a, b); }
  static BRISK_DW8_INLINE I hi8(I a, I b) { return _mm256_unpackhi_epi8(a, b); }
  static BRISK_DW8_INLINE I lo16(I a, I b) { return _mm256_unpacklo_epi16(a, b); }
  static BRISK_DW8_INLINE I hi16(I a, I b) { return _mm256_unpackhi_epi16(a, b); }
  static BRISK_DW8_INLINE I dot(I acc, I a, I b) { return _mm256_dpbusd_epi32(acc, a, b); }
  static BRISK_DW8_INLINE I requant(I acc, F scale, F shift) {
    return _mm256_cvtps_epi32(_mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), scale, shift));
  }
  static BRISK_DW8_INLINE I packBytes(I a, I b, I c, I d) {
    return _mm256_packus_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
  }
  static BRISK_DW8_INLINE I clamp(I v, I lo, I hi) { return _mm256_min_epu8(_mm256_max_epu8(v, lo), hi); }
};

// Phase 1: the interleaved columns of one block for the three input rows `rows` (null:
// a padded row), every column the output row's windows reach; 4 vectors per column.
template <class V>
BRISK_DW8_INLINE void interleave(const uint8_t* const rows[3], int64_t cstride, typename V::M mask,
                                 typename V::I pad, const WindowDim& w, int64_t columns, uint8_t* out) {
  using I = typename V::I;
  const I zero = V::zero();
  for (int64_t t = 0; t < columns; ++t, out += 4 * V::kBytes) {
    const int64_t ix = t - w.pad;
    const bool inside = ix >= 0 && ix < w.in;
    I r[3];
#pragma GCC unroll 3
    for (int k = 0; k < 3; ++k) r[k] = rows[k] != nullptr && inside ? V::loadMasked(pad, mask, rows[k] + ix * cstride) : pad;
    const I lo01 = V::lo8(r[0], r[1]), hi01 = V::hi8(r[0], r[1]);
    const I lo2 = V::lo8(r[2], zero), hi2 = V::hi8(r[2], zero);
    V::store(out + 0 * V::kBytes, V::lo16(lo01, lo2));
    V::store(out + 1 * V::kBytes, V::hi16(lo01, lo2));
    V::store(out + 2 * V::kBytes, V::lo16(hi01, hi2));
    V::store(out + 3 * V::kBytes, V::hi16(hi01, hi2));
  }
}

// Phases 2 and 3 for one block of one output row, at stride S.
template <class V, int S>
BRISK_DW8_INLINE void accumulate(const uint8_t* cols, const uint8_t* packed, typename V::M mask, typename V::I lo,
                                 typename V::I hi, int64_t out_w, int64_t cstride, uint8_t* y) {
  using I = typename V::I;
  using F = typename V::F;
  I k[12];
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) k[i] = V::loadu(packed + i * V::kBytes);
  F scale[4], shift[4];
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    scale[q] = V::loadf(packed + (12 + q) * V::kBytes);
    shift[q] = V::loadf(packed + (16 + q) * V::kBytes);
  }
  for (int64_t ox = 0; ox < out_w; ++ox) {
    const uint8_t* c = cols + ox * S * 4 * V::kBytes;
    I r[4];
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      I acc = V::dot(V::zero(), V::load(c + q * V::kBytes), k[q]);
      acc = V::dot(acc, V::load(c + (4 + q) * V::kBytes), k[4 + q]);
      acc = V::dot(acc, V::load(c + (8 + q) * V::kBytes), k[8 + q]);
      r[q] = V::requant(acc, scale[q], shift[q]);
    }
    // The packs saturate to 0..255 (int32 -> int16 signed, then int16 -> uint8) and put
    // the channels back in order: they undo the unpacks lane by lane.
    V::storeMasked(y + ox * cstride, mask, V::clamp(V::packBytes(r[0], r[1], r[2], r[3]), lo, hi));
  }
}

template <class V>
void runBlock(const uint8_t* image, uint8_t* yrow, int64_t oy, int64_t live, int64_t c, const uint8_t* packed,
              uint8_t pad_value, uint8_t lo, uint8_t hi, const WindowDim& h, const WindowDim& w, uint8_t* cols) {
  using M = typename V::M;
  const M mask = live >= V::kBytes ? static_cast<M>(~M{0}) : static_cast<M>((M{1} << live) - 1);
  const uint8_t* rows[3];
  for (int k = 0; k < 3; ++k) {
    const int64_t iy = oy * h.stride - h.pad + k;
    rows[k] = iy >= 0 && iy < h.in ? image + iy * w.in * c : nullptr;
  }
  interleave<V>(rows, c, mask, V::set1(pad_value), w, columnsOf(w), cols);
  if (w.stride == 1)
    accumulate<V, 1>(cols, packed, mask, V::set1(lo), V::set1(hi), w.out, c, yrow);
  else
    accumulate<V, 2>(cols, packed, mask, V::set1(lo), V::set1(hi), w.out, c, yrow);
}

}  // namespace

void DepthwiseInt8::run(const uint8_t* x, uint8_t* y, int64_t begin, int64_t end, const WindowDim& h,
                        const WindowDim& w, uint8_t* scratch) const {
  const int64_t c = channels_;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t n = r / h.out, oy = r % h.out;
    const uint8_t* image = x + n * h.in * w.in * c;
    uint8_t* yrow = y + r * w.out * c;
    for (const Block& b : blocks_) {
      const uint8_t* packed = packed_.data() + b.packed;
      if (b.width == 64)
        runBlock<Wide>(image + b.first, yrow + b.first, oy, b.live, c, packed, pad_value_, lo_, hi_, h, w, scratch);
      else
        runBlock<Narrow>(image + b.first, yrow + b.first, oy, b.live, c, packed, pad_value_, lo_, hi_, h, w, scratch);
    }
  }
}

#pragma GCC pop_options

}  // namespace brisk::ops_cpu::out
