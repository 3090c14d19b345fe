// ops_cpu/simd/depthwise_int8_nhwc against a plain loop that performs the same
// arithmetic (an exact int32 sum of the nine taps, padded taps reading the pad value,
// then one fp32 fused multiply-add, rounding to nearest even and the clamp), so every
// byte must match. Shapes cover whole and partial 64-channel blocks, strides 1 and 2,
// padding 0 to 2, one-column and one-row images, zero points at both ends of the range
// and clamps narrower than 0..255; row ranges check that a call writes only its rows.
#include "ops_cpu/simd/depthwise_int8_nhwc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace brisk::ops_cpu::out {
namespace {

struct Case {
  int64_t batch, channels, height, width, stride, pad;
  uint8_t pad_value, lo, hi;
};

std::string str(const Case& c) {
  return std::to_string(c.batch) + "x" + std::to_string(c.height) + "x" + std::to_string(c.width) + "x" +
         std::to_string(c.channels) + " stride " + std::to_string(c.stride) + " pad " + std::to_string(c.pad) +
         " zp " + std::to_string(c.pad_value) + " clamp " + std::to_string(c.lo) + ".." + std::to_string(c.hi);
}

WindowDim dim(int64_t in, int64_t stride, int64_t pad) {
  WindowDim d;
  d.in = in;
  d.kernel = 3;
  d.stride = stride;
  d.pad = pad;
  d.out = (in + 2 * pad - 3) / stride + 1;
  return d;
}

struct Layer {
  std::vector<int8_t> weight;
  std::vector<float> scale, shift;
};

Layer randomLayer(int64_t channels, std::mt19937& rng) {
  Layer l;
  std::uniform_int_distribution<int> w(-128, 127);
  std::uniform_real_distribution<float> s(0.0005f, 0.004f), b(-60.f, 90.f);
  for (int64_t i = 0; i < channels * 9; ++i) l.weight.push_back(static_cast<int8_t>(w(rng)));
  for (int64_t c = 0; c < channels; ++c) {
    l.scale.push_back(s(rng));
    l.shift.push_back(b(rng));
  }
  return l;
}

uint8_t reference(const std::vector<uint8_t>& x, const Layer& l, const Case& k, const WindowDim& h,
                  const WindowDim& w, int64_t n, int64_t oy, int64_t ox, int64_t c) {
  int32_t acc = 0;
  for (int64_t kh = 0; kh < 3; ++kh)
    for (int64_t kw = 0; kw < 3; ++kw) {
      const int64_t iy = oy * h.stride - h.pad + kh, ix = ox * w.stride - w.pad + kw;
      const bool inside = iy >= 0 && iy < h.in && ix >= 0 && ix < w.in;
      const int32_t v = inside ? x[((n * h.in + iy) * w.in + ix) * k.channels + c] : k.pad_value;
      acc += v * l.weight[c * 9 + kh * 3 + kw];
    }
  const float q = std::nearbyint(std::fma(static_cast<float>(acc), l.scale[c], l.shift[c]));
  const float clamped = std::fmin(std::fmax(q, 0.f), 255.f);
  const int v = static_cast<int>(clamped);
  return static_cast<uint8_t>(v < k.lo ? k.lo : v > k.hi ? k.hi : v);
}

// 64-byte aligned scratch, as run() asks.
struct Scratch {
  explicit Scratch(size_t bytes) : p(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64))) {}
  ~Scratch() { std::free(p); }
  uint8_t* p;
};

void check(const Case& k, std::mt19937& rng) {
  const WindowDim h = dim(k.height, k.stride, k.pad), w = dim(k.width, k.stride, k.pad);
  ASSERT_TRUE(DepthwiseInt8::supports(h, w)) << str(k);
  const Layer l = randomLayer(k.channels, rng);
  ASSERT_TRUE(DepthwiseInt8::fitsInt32(l.scale.data(), l.shift.data(), k.channels));
  std::uniform_int_distribution<int> px(0, 255);
  std::vector<uint8_t> x(k.batch * k.height * k.width * k.channels);
  for (auto& v : x) v = static_cast<uint8_t>(px(rng));
  const DepthwiseInt8 kernel(l.weight.data(), l.scale.data(), l.shift.data(), k.channels, k.pad_value, k.lo, k.hi);
  const int64_t rows = k.batch * h.out, row_bytes = w.out * k.channels;
  std::vector<uint8_t> y(rows * row_bytes, 0xA5);
  Scratch scratch(DepthwiseInt8::scratchBytes(w));
  // Two calls over a split of the rows, as threads would make them.
  const int64_t split = rows / 3;
  kernel.run(x.data(), y.data(), 0, split, h, w, scratch.p);
  for (int64_t i = split * row_bytes; i < rows * row_bytes; ++i)
    ASSERT_EQ(y[i], 0xA5) << str(k) << ": rows [0, " << split << ") wrote past them";
  kernel.run(x.data(), y.data(), split, rows, h, w, scratch.p);
  for (int64_t n = 0; n < k.batch; ++n)
    for (int64_t oy = 0; oy < h.out; ++oy)
      for (int64_t ox = 0; ox < w.out; ++ox)
        for (int64_t c = 0; c < k.channels; ++c)
          ASSERT_EQ(y[((n * h.out + oy) * w.out + ox) * k.channels + c], reference(x, l, k, h, w, n, oy, ox, c))
              << str(k) << " at " << n << "," << oy << "," << ox << "," << c;
}

TEST(DepthwiseInt8, MatchesAPlainLoop) {
  if (!depthwiseInt8Available()) GTEST_SKIP() << "this CPU lacks AVX-512 BW or VNNI";
  std::mt19937 rng(7);
  const Case cases[] = {
      {1, 32, 12, 12, 1, 1, 0, 0, 255},    {2, 96, 9, 10, 2, 1, 128, 0, 255},  {1, 144, 8, 7, 1, 1, 255, 3, 200},
      {1, 16, 5, 5, 2, 1, 17, 0, 255},     {3, 13, 6, 9, 1, 1, 90, 0, 255},    {1, 70, 7, 7, 1, 0, 0, 0, 255},
      {1, 200, 4, 6, 2, 2, 40, 10, 240},   {2, 64, 1, 1, 1, 1, 128, 0, 255},   {1, 128, 3, 1, 1, 1, 5, 0, 255},
      {1, 960, 7, 7, 1, 1, 120, 64, 255},  {1, 24, 3, 3, 2, 0, 0, 0, 255},     {1, 65, 2, 11, 2, 1, 250, 0, 99},
  };
  for (const Case& k : cases) check(k, rng);
}

TEST(DepthwiseInt8, RejectsOtherGeometries) {
  WindowDim ok = dim(8, 1, 1);
  EXPECT_TRUE(DepthwiseInt8::supports(ok, ok));
  WindowDim five = ok;
  five.kernel = 5;
  EXPECT_FALSE(DepthwiseInt8::supports(ok, five));
  WindowDim dilated = ok;
  dilated.dilation = 2;
  EXPECT_FALSE(DepthwiseInt8::supports(dilated, ok));
  EXPECT_FALSE(DepthwiseInt8::supports(ok, dim(8, 3, 1)));
  WindowDim wrong_out = ok;
  wrong_out.out = 7;
  EXPECT_FALSE(DepthwiseInt8::supports(wrong_out, ok));
}

TEST(DepthwiseInt8, RefusesScalesThatCouldOverflowTheConversion) {
  const float small[] = {0.01f, 0.02f}, big[] = {0.01f, 1e5f}, shift[] = {3.f, -3.f}, nan[] = {0.f, NAN};
  EXPECT_TRUE(DepthwiseInt8::fitsInt32(small, shift, 2));
  EXPECT_FALSE(DepthwiseInt8::fitsInt32(big, shift, 2));
  EXPECT_FALSE(DepthwiseInt8::fitsInt32(small, nan, 2));
}

}  // namespace
}  // namespace brisk::ops_cpu::out
