#include "ops_quantized/linear_kernels.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/quantized/PackedParams.h>
#include <immintrin.h>

#include <algorithm>

#include "core/graph/graph.h"
#include "ops_quantized/linear_rewrite.h"

// Exported by libtorch_cpu (fbgemm/Utils.h, whose headers Bazel's @torch does not
// expose): whether fbgemm runs its AVX-512 VNNI int8 kernels on this CPU.
namespace fbgemm {
bool fbgemmHasAvx512VnniSupport();
}

namespace brisk::ops_quantized {
namespace {

using Packed = c10::intrusive_ptr<LinearPackedParamsBase>;

Packed prepack(const char* op, std::vector<c10::IValue> args) {
  auto& dispatcher = c10::Dispatcher::singleton();
  const c10::OperatorHandle handle = dispatcher.findSchemaOrThrow(op, "");
  torch::jit::Stack stack(std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  handle.callBoxed(stack);
  return stack.at(0).toCustomClass<LinearPackedParamsBase>();
}

struct Weights {
  at::Tensor w;  // [N, K] fp32, as the model stores it
  c10::optional<at::Tensor> b;
};

Weights weightsOf(KernelBuildContext& b) {
  const Node& n = b.node();
  Weights out;
  out.w = n.input(1)->constant().toTensor().contiguous();
  if (!n.input(2)->constant().isNone()) out.b = n.input(2)->constant().toTensor().contiguous();
  return out;
}

// x's sizes with the last one replaced by `n`.
c10::SmallVector<int64_t, 4> outputSizes(const at::Tensor& x, int64_t n) {
  c10::SmallVector<int64_t, 4> s(x.sizes().begin(), x.sizes().end());
  s.back() = n;
  return s;
}

// The fp32 path: ATen's linear on the unquantized weight (non-fp32 inputs).
bool generic(KernelContext& ctx, const Weights& w, const at::Tensor& x, int64_t k) {
  if (x.scalar_type() == at::kFloat && x.dim() >= 1 && x.size(-1) == k && x.device().is_cpu() &&
      x.layout() == at::kStrided)
    return false;
  ctx.output(0) = at::linear(x, w.w, w.b);
  return true;
}

// fbgemm's dynamic linear quantizes the input over [min(x, 0), max(x, 0)] with a scale of
// at least 6.1e-5 (PyTorch's ChooseQuantizationParams): an input spanning less than
// 255 times that rounds to zero, and the result would be the bias alone. Those inputs
// take the fp32 layer. The scan stops at the first 32 values whose lanes already span
// that much (any ordinary input's first block), so it costs next to nothing.
constexpr float kSmallestRange = 255.f * 6.1e-5f;

// Whether [mn, mx] widened by x[begin, n) spans less than kSmallestRange.
bool spanBelowSmallest(const float* x, int64_t begin, int64_t n, float mn, float mx) {
  for (int64_t i = begin; i < n; ++i) mn = std::min(mn, x[i]), mx = std::max(mx, x[i]);
  return mx - mn < kSmallestRange;
}

__attribute__((target("avx2"))) bool belowSmallestScaleAvx2(const float* x, int64_t n) {
  const __m256 limit = _mm256_set1_ps(kSmallestRange);
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int j = 0; j < 32; j += 8) {
      const __m256 v = _mm256_loadu_ps(x + i + j);
      lo = _mm256_min_ps(v, lo);  // v first: a NaN lane keeps the running value
      hi = _mm256_max_ps(v, hi);
    }
    // One lane's span is a lower bound of the whole input's.
    if (_mm256_movemask_ps(_mm256_cmp_ps(_mm256_sub_ps(hi, lo), limit, _CMP_GE_OQ))) return false;
  }
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, lo);
  _mm256_store_ps(h, hi);
  float mn = 0.f, mx = 0.f;
  for (int j = 0; j < 8; ++j) mn = std::min(mn, l[j]), mx = std::max(mx, h[j]);
  return spanBelowSmallest(x, i, n, mn, mx);
}

bool belowSmallestScale(const float* x, int64_t n) {
  if (fbgemmRuns()) return belowSmallestScaleAvx2(x, n);  // fbgemm needs AVX2 itself
  return spanBelowSmallest(x, 0, n, 0.f, 0.f);
}

std::unique_ptr<Kernel> makeLinearFp16(KernelBuildContext& b) {
  Weights w = weightsOf(b);
  const int64_t n = w.w.size(0), k = w.w.size(1);
  Packed packed = prepack("quantized::linear_prepack_fp16", {w.w, w.b});
  const std::string what = "fbgemm fp16 weights " + std::to_string(k) + "->" + std::to_string(n) +
                           " (quantized::linear_prepack_fp16 at load, fp32 accumulation)";
  return functionKernel(
      KernelKind::kOutVariant,
      [w = std::move(w), packed = std::move(packed), n, k](KernelContext& ctx) {
        const at::Tensor& x0 = ctx.tensor(0);
        if (generic(ctx, w, x0, k)) return;
        const at::Tensor x = x0.dim() >= 2 && x0.is_contiguous() ? x0 : x0.contiguous().reshape({-1, k});
        c10::IValue& slot = ctx.output(0);
        if (!slot.isTensor() || slot.toTensor().scalar_type() != at::kFloat || !slot.toTensor().is_contiguous())
          slot = at::empty({0}, x.options());
        at::Tensor& out = slot.toTensor();
        packed->apply_dynamic_out(x, out, /*reduce_range=*/false);  // resizes out as needed
        if (x.dim() != x0.dim()) out = out.view(outputSizes(x0, n));
      },
      what);
}

// Drops the warnings of the calls it guards: quantize_per_channel warns that quantized
// tensors are deprecated as a public API, which says nothing to a user of this mode
// (the int8 weight lives only inside fbgemm's packed copy).
class SilentWarnings final : public c10::WarningHandler {
 public:
  void process(const c10::Warning&) override {}
};

// `relu`: the node is linear_int8_dynamic_relu (fbgemm applies the relu as it
// dequantizes; fp32 inputs of other dtypes take ATen's linear and relu).
std::unique_ptr<Kernel> makeLinearInt8(KernelBuildContext& b, bool relu) {
  Weights w = weightsOf(b);
  const int64_t n = w.w.size(0), k = w.w.size(1);
  // Symmetric per-channel int8: +-127 so negation stays representable.
  const at::Tensor scales = (w.w.abs().amax(1) / 127.0).clamp_min(1e-12).to(at::kDouble);
  const at::Tensor zeros = at::zeros({n}, at::kLong);
  SilentWarnings silent;
  c10::WarningUtils::WarningHandlerGuard guard(&silent);
  const at::Tensor wq = at::quantize_per_channel(w.w, scales, zeros, 0, at::kQInt8);
  Packed packed = prepack("quantized::linear_prepack", {wq, w.b});
  const bool reduce_range = int8ReduceRange();
  const std::string what = "fbgemm int8 dynamic " + std::to_string(k) + "->" + std::to_string(n) +
                           (relu ? " + relu" : "") + " (per-channel int8 weights packed at load, " +
                           (reduce_range ? "7" : "8") + "-bit uint8 activations quantized per call)";
  return functionKernel(
      KernelKind::kNative,
      [w = std::move(w), packed = std::move(packed), n, k, reduce_range, relu](KernelContext& ctx) {
        const at::Tensor& x0 = ctx.tensor(0);
        if (generic(ctx, w, x0, k)) {
          if (relu) ctx.output(0) = at::relu(ctx.output(0).toTensor());
          return;
        }
        const at::Tensor x = x0.dim() >= 2 && x0.is_contiguous() ? x0 : x0.contiguous().reshape({-1, k});
        if (belowSmallestScale(x.data_ptr<float>(), x.numel())) {
          at::Tensor y = at::linear(x0, w.w, w.b);
          ctx.output(0) = relu ? at::relu(y) : std::move(y);
          return;
        }
        at::Tensor y = relu ? packed->apply_dynamic_relu(x, reduce_range) : packed->apply_dynamic(x, reduce_range);
        ctx.output(0) = x.dim() != x0.dim() ? y.view(outputSizes(x0, n)) : std::move(y);
      },
      what);
}

}  // namespace

bool int8ReduceRange() { return !fbgemm::fbgemmHasAvx512VnniSupport(); }

bool fbgemmRuns() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  }();
  return yes;
}

void registerLinearKernels(PluginRegistrar& r) {
  r.outVariant(kLinearFp16Kind, makeLinearFp16);
  r.native(kLinearInt8Kind, [](KernelBuildContext& b) { return makeLinearInt8(b, false); });
  r.native(kLinearInt8ReluKind, [](KernelBuildContext& b) { return makeLinearInt8(b, true); });
}

}  // namespace brisk::ops_quantized
