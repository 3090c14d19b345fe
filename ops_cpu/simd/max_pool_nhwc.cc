// Direct channels-last max_pool2d; see max_pool_nhwc.h for why it matches ATen bit for bit.
// Windows are clipped by windowAt (window_dim.h), as the NCHW kernel's.
#include "ops_cpu/simd/max_pool_nhwc.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops_cpu/simd/cpu_features.h"

namespace brisk::ops_cpu::out {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// One output pixel, channels [c0, channels), scalar: ATen's tail loop.
inline void pixelScalar(const float* in, float* out, int64_t c0, int64_t channels, Window wh, Window ww,
                        const WindowDim& h, const WindowDim& w) {
  for (int64_t c = c0; c < channels; ++c) {
    float m = kNegInf;
    for (int64_t ih = wh.begin; ih < wh.end; ih += h.dilation)
      for (int64_t iw = ww.begin; iw < ww.end; iw += w.dilation) {
        const float v = in[(ih * w.in + iw) * channels + c];
        if (v > m || std::isnan(v)) m = v;
      }
    out[c] = m;
  }
}

// R registers of 8 channels from `c`, folded over the window, then stored.
template <int R>
__attribute__((target("avx2"), always_inline)) inline void pixelBlock(const float* in, float* out, int64_t c,
                                                                      int64_t channels, Window wh, Window ww,
                                                                      const WindowDim& h, const WindowDim& w) {
  __m256 m[R];
  for (int r = 0; r < R; ++r) m[r] = _mm256_set1_ps(kNegInf);
  for (int64_t ih = wh.begin; ih < wh.end; ih += h.dilation)
    for (int64_t iw = ww.begin; iw < ww.end; iw += w.dilation) {
      const float* p = in + (ih * w.in + iw) * channels + c;
      for (int r = 0; r < R; ++r) {
        const __m256 v = _mm256_loadu_ps(p + 8 * r);
        // v > m (ordered: false when either is NaN), or v is NaN: v replaces m.
        const __m256 take = _mm256_or_ps(_mm256_cmp_ps(v, m[r], _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        m[r] = _mm256_blendv_ps(m[r], v, take);
      }
    }
  for (int r = 0; r < R; ++r) _mm256_storeu_ps(out + c + 8 * r, m[r]);
}

__attribute__((target("avx2"))) void rowsAvx2(const float* in, float* out, int64_t channels, const WindowDim& h,
                                               const WindowDim& w, int64_t row_begin, int64_t row_end) {
  const int64_t in_image = h.in * w.in * channels;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t n = r / h.out, oh = r % h.out;
    const float* image = in + n * in_image;
    const Window wh = windowAt(h, oh);
    float* o = out + r * w.out * channels;
    for (int64_t ow = 0; ow < w.out; ++ow, o += channels) {
      const Window ww = windowAt(w, ow);
      int64_t c = 0;
      for (; c + 32 <= channels; c += 32) pixelBlock<4>(image, o, c, channels, wh, ww, h, w);
      for (; c + 8 <= channels; c += 8) pixelBlock<1>(image, o, c, channels, wh, ww, h, w);
      pixelScalar(image, o, c, channels, wh, ww, h, w);
    }
  }
}

void rowsScalar(const float* in, float* out, int64_t channels, const WindowDim& h, const WindowDim& w,
                int64_t row_begin, int64_t row_end) {
  const int64_t in_image = h.in * w.in * channels;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t n = r / h.out, oh = r % h.out;
    const Window wh = windowAt(h, oh);
    float* o = out + r * w.out * channels;
    for (int64_t ow = 0; ow < w.out; ++ow, o += channels)
      pixelScalar(in + n * in_image, o, 0, channels, wh, windowAt(w, ow), h, w);
  }
}

}  // namespace

void maxPool2dNhwcRows(const float* in, float* out, int64_t channels, const WindowDim& h, const WindowDim& w,
                       int64_t row_begin, int64_t row_end) {
  if (cpuHasAvx2Fma())
    rowsAvx2(in, out, channels, h, w, row_begin, row_end);
  else
    rowsScalar(in, out, channels, h, w, row_begin, row_end);
}

}  // namespace brisk::ops_cpu::out
