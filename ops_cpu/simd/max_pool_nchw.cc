// Direct NCHW max_pool2d; see max_pool_nchw.h for the algorithm and why it matches
// ATen bit for bit.
#include "ops_cpu/simd/max_pool_nchw.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

// The vector helpers below are always inlined into target-specific callers, so the
// AVX argument-passing ABI note GCC emits for them does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace brisk::ops_cpu::out {
namespace {

#define BRISK_MAXPOOL_INLINE inline __attribute__((always_inline))

template <class T>
constexpr T kNegInf = -std::numeric_limits<T>::infinity();

// ATen's fold step: a value replaces the running maximum when it is greater or NaN.
// (Starting a fold from its first value instead of -inf selects the same bits: the
// first step from -inf returns v unless v is -inf itself.)
// Written as maxss/maxsd (`v > m ? v : m`) plus a NaN test that is almost never taken,
// rather than one data-dependent branch that random data mispredicts half the time.
template <class T>
BRISK_MAXPOOL_INLINE T maxStep(T m, T v) {
  const T r = v > m ? v : m;
  return __builtin_expect(std::isnan(v), 0) ? v : r;
}

// The same step on GCC vectors of N lanes: `v > m ? v : m` is maxps(v, m) (keeps m on
// ties and when either is NaN), then NaN lanes of v win.
template <class T, int N>
struct Lanes {
  typedef T V __attribute__((vector_size(N * sizeof(T))));
  typedef std::conditional_t<sizeof(T) == 4, int32_t, int64_t> I;
  typedef I Mask __attribute__((vector_size(N * sizeof(T))));

  static BRISK_MAXPOOL_INLINE V load(const T* p) {
    V v;
    std::memcpy(&v, p, sizeof(V));
    return v;
  }
  static BRISK_MAXPOOL_INLINE void store(T* p, const V& v) { std::memcpy(p, &v, sizeof(V)); }
  static BRISK_MAXPOOL_INLINE V step(const V& m, const V& v) {
    V r = v > m ? v : m;
    return v != v ? v : r;
  }
  // p[0], p[2], ..., p[2N-2] from two loads, a = p[0..N) and b = p[N-1..2N-1) (never
  // past p[2N-2], the last element an interior window needs), and one in-lane shuffle
  // (shufps/shufpd: a's even and b's odd elements of each 128-bit lane). With 256-bit
  // vectors the 64-bit chunks come out in the order 0, 2, 1, 3 ("permuted"): a fold is
  // lane-wise, so it runs on permuted vectors and unpermute() fixes the order once.
  static BRISK_MAXPOOL_INLINE V evensPermuted(const T* p) {
    const V a = load(p), b = load(p + N - 1);
    if constexpr (N == 2) {
      return __builtin_shuffle(a, b, Mask{0, 3});
    } else if constexpr (N == 4 && sizeof(T) == 4) {
      return __builtin_shuffle(a, b, Mask{0, 2, 5, 7});
    } else if constexpr (N == 4) {
      return __builtin_shuffle(a, b, Mask{0, 5, 2, 7});
    } else {
      static_assert(N == 8, "lane count");
      return __builtin_shuffle(a, b, Mask{0, 2, 9, 11, 4, 6, 13, 15});
    }
  }
  static BRISK_MAXPOOL_INLINE V unpermute(const V& v) {
    if constexpr (N * sizeof(T) == 16) {
      return v;
    } else if constexpr (N == 4) {
      return __builtin_shuffle(v, Mask{0, 2, 1, 3});
    } else {
      return __builtin_shuffle(v, Mask{0, 1, 4, 5, 2, 3, 6, 7});
    }
  }
};

// Output indices [lo, hi) whose windows lie wholly inside the input (no clipping).
struct Interior {
  int64_t lo;
  int64_t hi;
};
Interior interiorOf(const PoolDim& d) {
  const int64_t lo = std::min((d.pad + d.stride - 1) / d.stride, d.out);
  const int64_t last_start = d.in - 1 - (d.kernel - 1) * d.dilation + d.pad;  // o * stride <= this
  const int64_t hi = last_start < 0 ? 0 : std::min(last_start / d.stride + 1, d.out);
  return {lo, std::max(lo, hi)};
}

// Horizontal pass over one input row: dst[o] = fold of row over window o, o < w.out.
// K: the kernel width when known at compile time (the tap loop unrolls), else 0.
template <class T, int N, int K>
BRISK_MAXPOOL_INLINE void poolRow(const T* row, T* dst, const PoolDim& w, Interior in) {
  using L = Lanes<T, N>;
  auto clipped = [&](int64_t o) {
    const Window win = windowAt(w, o);
    T m = kNegInf<T>;
    for (int64_t i = win.begin; i < win.end; i += w.dilation) m = maxStep(m, row[i]);
    dst[o] = m;
  };
  for (int64_t o = 0; o < in.lo; ++o) clipped(o);
  const int64_t k = K > 0 ? K : w.kernel, dil = w.dilation;
  int64_t o = in.lo;
  // Vector steps of N columns; the last one is moved back to end at in.hi (it then
  // recomputes a few columns: same values), so no scalar tail when in.hi - in.lo >= N.
  auto vectorSteps = [&](auto&& columns) {
    if (in.hi - in.lo < N) return;
    for (; o + N <= in.hi; o += N) columns(o);
    if (o < in.hi) columns(in.hi - N);
    o = in.hi;
  };
  if (w.stride == 1) {
    vectorSteps([&](int64_t c) {
      const T* p = row + c - w.pad;
      typename L::V m = L::load(p);
      for (int64_t j = 1; j < k; ++j) m = L::step(m, L::load(p + j * dil));
      L::store(dst + c, m);
    });
  } else if (w.stride == 2) {
    vectorSteps([&](int64_t c) {
      const T* p = row + 2 * c - w.pad;
      typename L::V m = L::evensPermuted(p);
      for (int64_t j = 1; j < k; ++j) m = L::step(m, L::evensPermuted(p + j * dil));
      L::store(dst + c, L::unpermute(m));
    });
  }
  for (; o < in.hi; ++o) {
    const T* p = row + o * w.stride - w.pad;
    T m = p[0];
    for (int64_t j = 1; j < k; ++j) m = maxStep(m, p[j * dil]);
    dst[o] = m;
  }
  for (o = in.hi; o < w.out; ++o) clipped(o);
}

// Vertical pass: dst = elementwise fold of rows[0..n) (n >= 1), n rows of `len`.
template <class T, int N>
BRISK_MAXPOOL_INLINE void foldRows(const T* const* rows, int64_t n, T* dst, int64_t len) {
  using L = Lanes<T, N>;
  auto columns = [&](int64_t c) {
    typename L::V m = L::load(rows[0] + c);
    for (int64_t r = 1; r < n; ++r) m = L::step(m, L::load(rows[r] + c));
    L::store(dst + c, m);
  };
  int64_t o = 0;
  if (len >= N) {
    for (; o + N <= len; o += N) columns(o);
    if (o < len) columns(len - N);  // overlaps the previous step: same values
    return;
  }
  for (; o < len; ++o) {
    T m = rows[0][o];
    for (int64_t r = 1; r < n; ++r) m = maxStep(m, rows[r][o]);
    dst[o] = m;
  }
}

// Working memory of one call: `slots` cached pooled rows of w.out values, the input row
// each holds (-1: none), and the row pointers of one output row's window.
template <class T>
struct RowCache {
  int64_t slots;
  T* rows;
  int64_t* tags;
  const T** window;
};

template <class T, int N, int K>
BRISK_MAXPOOL_INLINE void poolPlanes(const T* in, T* out, int64_t planes, const PoolDim& h, const PoolDim& w,
                                     const RowCache<T>& cache) {
  const Interior wi = interiorOf(w);
  const int64_t in_plane = h.in * w.in, out_plane = h.out * w.out;
  for (int64_t p = 0; p < planes; ++p) {
    const T* src = in + p * in_plane;
    T* dst = out + p * out_plane;
    std::fill(cache.tags, cache.tags + cache.slots, int64_t{-1});
    for (int64_t oh = 0; oh < h.out; ++oh) {
      T* dst_row = dst + oh * w.out;
      const Window win = windowAt(h, oh);
      int64_t n = 0;
      for (int64_t ih = win.begin; ih < win.end; ih += h.dilation) {
        int64_t s = 0;
        while (s < cache.slots && cache.tags[s] != ih) ++s;
        if (s == cache.slots) {
          // Reuse a slot holding no row of this window. One exists: the window has
          // at most `slots` rows and this one is not cached.
          s = 0;
          for (; s < cache.slots; ++s) {
            const int64_t t = cache.tags[s];
            if (t < win.begin || t >= win.end || (t - win.begin) % h.dilation != 0) break;
          }
          cache.tags[s] = ih;
          poolRow<T, N, K>(src + ih * w.in, cache.rows + s * w.out, w, wi);
        }
        cache.window[n++] = cache.rows + s * w.out;
      }
      if (n == 0) {
        std::fill(dst_row, dst_row + w.out, kNegInf<T>);
      } else {
        foldRows<T, N>(cache.window, n, dst_row, w.out);
      }
    }
  }
}

// Element-width lane counts: SSE2 (the x86-64 baseline) and AVX2.
template <class T>
constexpr int kSseLanes = 16 / sizeof(T);
template <class T>
constexpr int kAvx2Lanes = 32 / sizeof(T);

// Kernel widths 2 and 3 (nearly every CNN's max-pool) get unrolled tap loops.
template <class T, int N>
BRISK_MAXPOOL_INLINE void poolPlanesAnyK(const T* in, T* out, int64_t planes, const PoolDim& h, const PoolDim& w,
                                         const RowCache<T>& c) {
  if (w.kernel == 3) {
    poolPlanes<T, N, 3>(in, out, planes, h, w, c);
  } else if (w.kernel == 2) {
    poolPlanes<T, N, 2>(in, out, planes, h, w, c);
  } else {
    poolPlanes<T, N, 0>(in, out, planes, h, w, c);
  }
}

template <class T>
void poolPlanesSse(const T* in, T* out, int64_t planes, const PoolDim& h, const PoolDim& w, const RowCache<T>& c) {
  poolPlanesAnyK<T, kSseLanes<T>>(in, out, planes, h, w, c);
}
template <class T>
__attribute__((target("avx2"))) void poolPlanesAvx2(const T* in, T* out, int64_t planes, const PoolDim& h,
                                                    const PoolDim& w, const RowCache<T>& c) {
  poolPlanesAnyK<T, kAvx2Lanes<T>>(in, out, planes, h, w, c);
}

bool haveAvx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return yes;
}

template <class T>
void poolAll(const T* in, T* out, int64_t planes, const PoolDim& h, const PoolDim& w) {
  if (planes <= 0 || h.out <= 0 || w.out <= 0) return;
  // A window spans at most min(kernel, in) distinct rows.
  const int64_t slots = std::max<int64_t>(1, std::min(h.kernel, h.in));
  const size_t bytes = slots * w.out * sizeof(T) + slots * sizeof(int64_t) + slots * sizeof(T*);
  alignas(64) unsigned char stack[4096];
  std::unique_ptr<unsigned char[]> heap;
  unsigned char* mem = stack;
  if (bytes > sizeof(stack)) {
    heap.reset(new unsigned char[bytes]);
    mem = heap.get();
  }
  // Layout: tags (int64), window pointers, then rows (T): each suitably aligned.
  RowCache<T> cache;
  cache.slots = slots;
  cache.tags = reinterpret_cast<int64_t*>(mem);
  cache.window = reinterpret_cast<const T**>(mem + slots * sizeof(int64_t));
  cache.rows = reinterpret_cast<T*>(mem + slots * sizeof(int64_t) + slots * sizeof(T*));
  if (haveAvx2()) {
    poolPlanesAvx2<T>(in, out, planes, h, w, cache);
  } else {
    poolPlanesSse<T>(in, out, planes, h, w, cache);
  }
}

}  // namespace

int64_t maxPoolOutputSize(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // div_rtn: division rounding toward -inf.
  int64_t q = num / stride;
  if (num % stride != 0 && ((num < 0) != (stride < 0))) --q;
  int64_t out = q + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

void maxPool2dPlanes(const float* in, float* out, int64_t planes, const PoolDim& h, const PoolDim& w) {
  poolAll(in, out, planes, h, w);
}
void maxPool2dPlanes(const double* in, double* out, int64_t planes, const PoolDim& h, const PoolDim& w) {
  poolAll(in, out, planes, h, w);
}

}  // namespace brisk::ops_cpu::out
