// Core's native kernels for PT2E's quantize / dequantize ops
// (core/graph/quantized_decomposed.h): PyTorch has no C++ kernel for them, so without
// these a PT2E program could not run at all. They compute PyTorch's reference, op for
// op; a dequantized constant weight never gets here (constant folding computed it at
// load).
#include <ATen/ATen.h>
#include <c10/util/SmallVector.h>

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/graph/graph.h"
#include "core/graph/quantized_decomposed.h"
#include "core/kernels/core_kernel_sets.h"
#include "core/kernels/kernel_registry.h"

namespace brisk {
namespace {

// One pass over a dense float32 input for quantize_per_tensor (numbers as scale and
// zero point, uint8 / int8 result), with ATen's arithmetic: the float product with the
// reciprocal rounded half to even, the zero point added and the bounds applied in float,
// then the integral value converted. The same bits as the reference's five ATen passes
// (ATen's vectorized round is the same _mm256_round_ps). A NaN input becomes quant_min
// here, in both loops (the reference's conversion of a NaN is unspecified).
template <typename Q>
void quantizeScalar(const float* x, Q* out, int64_t begin, int64_t n, float inv, float zp, float lo, float hi) {
  for (int64_t i = begin; i < n; ++i) {
    const float v = std::nearbyint(x[i] * inv) + zp;
    out[i] = static_cast<Q>(v >= lo ? (v <= hi ? v : hi) : lo);  // NaN fails v >= lo
  }
}

// Eight lanes rounded, offset and clamped as quantizeScalar does, as int32.
__attribute__((target("avx2"))) inline __m256i quantize8(const float* x, __m256 vinv, __m256 vzp, __m256 vlo, __m256 vhi) {
  __m256 v = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x), vinv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, vzp), vlo), vhi);  // max_ps(NaN, lo) is lo
  return _mm256_cvttps_epi32(v);
}

// `packed`: the bounds lie in Q's range, so saturating packs narrow 32 values at a time
// with the same result as the scalar conversion; otherwise (bounds outside the type,
// where the conversion wraps) lane by lane.
template <typename Q>
__attribute__((target("avx2"))) void quantizeAvx2(const float* x, Q* out, int64_t n, float inv, float zp, float lo,
                                                  float hi, bool packed) {
  const __m256 vinv = _mm256_set1_ps(inv), vzp = _mm256_set1_ps(zp), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  int64_t i = 0;
  if (packed) {
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);  // undoes the packs' per-lane interleave
    for (; i + 32 <= n; i += 32) {
      const __m256i a = _mm256_packs_epi32(quantize8(x + i, vinv, vzp, vlo, vhi), quantize8(x + i + 8, vinv, vzp, vlo, vhi));
      const __m256i b =
          _mm256_packs_epi32(quantize8(x + i + 16, vinv, vzp, vlo, vhi), quantize8(x + i + 24, vinv, vzp, vlo, vhi));
      const __m256i bytes = std::is_same_v<Q, uint8_t> ? _mm256_packus_epi16(a, b) : _mm256_packs_epi16(a, b);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_permutevar8x32_epi32(bytes, order));
    }
  }
  alignas(32) int32_t lanes[8];
  for (; i + 8 <= n; i += 8) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), quantize8(x + i, vinv, vzp, vlo, vhi));
    for (int k = 0; k < 8; ++k) out[i + k] = static_cast<Q>(lanes[k]);
  }
  quantizeScalar(x, out, i, n, inv, zp, lo, hi);
}

template <typename Q>
void quantizeLoop(const float* x, Q* out, int64_t n, float inv, float zp, float lo, float hi) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) {
    const bool packed = lo >= static_cast<float>(std::numeric_limits<Q>::min()) &&
                        hi <= static_cast<float>(std::numeric_limits<Q>::max()) && lo <= hi;
    quantizeAvx2(x, out, n, inv, zp, lo, hi, packed);
  } else {
    quantizeScalar(x, out, 0, n, inv, zp, lo, hi);
  }
}

// dequantize_per_tensor to float32: (float(q) - zero_point) * scale, in float.
template <typename Q>
void dequantizeScalar(const Q* q, float* out, int64_t begin, int64_t n, float scale, float zp) {
  for (int64_t i = begin; i < n; ++i) out[i] = (static_cast<float>(q[i]) - zp) * scale;
}

template <typename Q>
__attribute__((target("avx2"))) void dequantizeAvx2(const Q* q, float* out, int64_t n, float scale, float zp) {
  const __m256 vs = _mm256_set1_ps(scale), vzp = _mm256_set1_ps(zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + i));
    const __m256i ints = std::is_same_v<Q, uint8_t> ? _mm256_cvtepu8_epi32(bytes) : _mm256_cvtepi8_epi32(bytes);
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(ints), vzp), vs));
  }
  dequantizeScalar(q, out, i, n, scale, zp);
}

template <typename Q>
void dequantizeLoop(const Q* q, float* out, int64_t n, float scale, float zp) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2)
    dequantizeAvx2(q, out, n, scale, zp);
  else
    dequantizeScalar(q, out, 0, n, scale, zp);
}

bool isQuantType(at::ScalarType t) { return t == at::kByte || t == at::kChar; }

// The one-pass loops above where they apply (numbers as parameters, dense CPU input of
// the expected dtype, float32 out); false: the reference runs.
bool fastPath(QuantizedOp op, KernelContext& ctx) {
  if (!ctx.input(1).isDouble() || !ctx.input(2).isInt()) return false;
  const at::Tensor& x = ctx.tensor(0);
  // Any dense layout (a convolution partition's NHWC result): element for element in
  // memory order, into a result with the same strides.
  if (!x.is_cpu() || x.layout() != at::kStrided || !x.is_non_overlapping_and_dense()) return false;
  const at::ScalarType q = ctx.input(5).toScalarType();
  const float scale = static_cast<float>(ctx.input(1).toDouble());
  const float zero_point = static_cast<float>(ctx.input(2).toInt());
  if (op == QuantizedOp::kQuantizePerTensor) {
    if (x.scalar_type() != at::kFloat || !isQuantType(q)) return false;
    // PyTorch computes the reciprocal in double (1.0 / scale), then ATen rounds it to
    // float for the float product.
    const float inv = static_cast<float>(1.0 / ctx.input(1).toDouble());
    const float lo = static_cast<float>(ctx.input(3).toInt()), hi = static_cast<float>(ctx.input(4).toInt());
    at::Tensor out = at::empty_like(x, x.options().dtype(q));
    if (q == at::kByte)
      quantizeLoop(x.data_ptr<float>(), out.data_ptr<uint8_t>(), x.numel(), inv, zero_point, lo, hi);
    else
      quantizeLoop(x.data_ptr<float>(), out.data_ptr<int8_t>(), x.numel(), inv, zero_point, lo, hi);
    ctx.output(0) = std::move(out);
    return true;
  }
  if (op == QuantizedOp::kDequantizePerTensor) {
    if (x.scalar_type() != q || !isQuantType(q) || !(ctx.input(6).isNone() || ctx.input(6).toScalarType() == at::kFloat))
      return false;
    at::Tensor out = at::empty_like(x, x.options().dtype(at::kFloat));
    if (q == at::kByte)
      dequantizeLoop(x.data_ptr<uint8_t>(), out.data_ptr<float>(), x.numel(), scale, zero_point);
    else
      dequantizeLoop(x.data_ptr<int8_t>(), out.data_ptr<float>(), x.numel(), scale, zero_point);
    ctx.output(0) = std::move(out);
    return true;
  }
  return false;
}

std::unique_ptr<Kernel> makeQuantizedOp(KernelBuildContext& b) {
  const std::string key = b.node().key();
  const std::optional<QuantizedOp> op = quantizedOpFor(key);
  if (!op) return nullptr;
  return functionKernel(
      KernelKind::kNative,
      [op = *op, key](KernelContext& ctx) {
        if (fastPath(op, ctx)) return;
        c10::SmallVector<c10::IValue, 8> args;
        for (size_t i = 0; i < ctx.numInputs(); ++i) args.push_back(ctx.input(i));
        ctx.output(0) = runQuantizedDecomposed(op, args, key);
      },
      "PyTorch's reference arithmetic: one pass over a dense input per tensor, else its ATen ops");
}

void registerQuantizedDecomposedKernels(Registries& r) {
  for (const std::string& key : quantizedDecomposedKeys()) r.native.add(key, makeQuantizedOp, "core");
}

const CoreKernelSetRegistration quantized_decomposed_kernels(registerQuantizedDecomposedKernels);

}  // namespace
}  // namespace brisk
