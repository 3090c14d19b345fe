// Matrix products: linear, addmm, mm, bmm, baddbmm, matmul.
//
// linear with a frozen fp32 weight and inputs of the sizes smallGemmTakes() runs
// brisk's own GEMM on a weight packed at load (small_gemm.h: why, and its order of
// operations), unless the plugin option ops_cpu.small_gemm is off. Everything below describes the other
// inputs, and every linear when it is off.
//
// The core ATen IR spells linear as addmm(bias, x, permute(W)) (mm without bias), the
// permute folded at load into a constant W^T view. addmm / mm with such a constant
// fp32 mat2 (and beta = alpha = 1) take the same two paths as linear, through the same
// functions: the packed kernel at small row counts (same option), else runLinear on
// W = mat2^T, which is ATen's own addmm call on these operands.
//
// linear: the weight W [N, K] is used as stored, as ATen's linear uses it (x W^T through
// the W^T view). For contiguous fp32 inputs the kernel makes the BLAS call ATen's addmm
// would make itself (blas.h: same sgemm_, same arguments), skipping addmm_out's per-call
// overhead; otherwise it calls at::cpu::addmm_out / mm_out as ATen's linear does.
// Either way it is ATen's own GEMM call on the same operands, so every output bit equals
// ATen's linear on any CPU (the per-op tests compare with zero tolerance).
//
// (brisk used to keep a contiguous W^T copy, which OpenBLAS packed faster. MKL packs the
// stored W as fast or faster -- the copy was 0.5-1.0x at 9-256 rows -- and a GEMM on a
// differently laid-out operand may round differently, so the copy is gone.)
#include <ATen/CPUFunctions.h>
#include <ATen/ops/matmul_native.h>
#include <ATen/ops/resize_native.h>

#include <climits>
#include <cstring>

#include "core/common/options.h"
#include "ops_cpu/out_variant/blas.h"
#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/out_variant/linear_gemm.h"
#include "ops_cpu/simd/cpu_features.h"
#include "ops_cpu/simd/small_gemm.h"

namespace brisk::ops_cpu::out {

// --- linear ----------------------------------------------------------------------------

// The sgemm_ call of ATen's addmm_out(y, bias, x, w.t()) (or mm_out(y, x, w.t())
// without bias) for row-major contiguous x [M, K], w [N, K], y [M, N] with N > 1: ATen
// sees y^T = w x^T in column-major terms (transpose_c; w read transposed), copies the
// bias rows into y and accumulates onto them (beta = 1; beta = 0 for mm).
void blasLinear(const float* x, const float* w, const float* bias, float* y, int64_t m, int64_t k, int64_t n) {
  if (bias)
    for (int64_t i = 0; i < m; ++i) std::memcpy(y + i * n, bias, n * sizeof(float));
  blasSgemm('T', 'N', n, m, k, 1.0f, w, k, x, k, bias ? 1.0f : 0.0f, y, n);
}

// Whether blasLinear applies: fp32 contiguous operands, 1-D bias, and the shapes for
// which ATen takes exactly that call (N > 1: a one-column result uses another
// orientation; ATen's own limits on int dimensions).
bool blasLinearApplies(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias) {
  if (!haveBlasSgemm() || x.scalar_type() != at::kFloat || w.scalar_type() != at::kFloat || !x.is_contiguous() ||
      !w.is_contiguous() || w.dim() != 2)
    return false;
  const int64_t n = w.size(0), k = w.size(1);
  if (x.dim() < 1 || x.size(-1) != k || k < 1 || n < 2 || k > INT_MAX || n > INT_MAX || x.numel() / k > INT_MAX)
    return false;
  return !bias.defined() || (bias.scalar_type() == at::kFloat && bias.dim() == 1 && bias.size(0) == n &&
                             bias.is_contiguous() && isDenseCpu(bias));
}

namespace {

// y = x W^T + b for weight `w` ([N, K]), its transposed view `wt` and `bias` (undefined
// when absent).
void runLinear(KernelContext& ctx, const at::Tensor& x, const at::Tensor& w, const at::Tensor& wt,
               const at::Tensor& bias) {
  const bool has_bias = bias.defined();
  if (!isDenseCpu(x) || !isDenseCpu(w) || w.dim() != 2 || x.scalar_type() != w.scalar_type() ||
      (has_bias && (!isDenseCpu(bias) || bias.scalar_type() != x.scalar_type()))) {
    ctx.output(0) = at::linear(x, w, has_bias ? c10::optional<at::Tensor>(bias) : c10::nullopt);
    return;
  }
  const int64_t dim = x.dim();
  if (dim >= 2 && blasLinearApplies(x, w, bias)) {
    const int64_t n = w.size(0), k = w.size(1);
    const int64_t m = x.numel() / k;
    c10::SmallVector<int64_t, 6> out_sizes(x.sizes().begin(), x.sizes().end());
    out_sizes.back() = n;
    at::Tensor* o = retainedOut(ctx, 0, at::kFloat);
    if (o) {
      at::native::resize_(*o, out_sizes, c10::nullopt);
      if (!o->is_contiguous()) o = nullptr;
    }
    if (!o) {
      ctx.output(0) = at::empty(out_sizes, x.options());
      o = &ctx.output(0).toTensor();
    }
    if (m > 0)
      blasLinear(x.data_ptr<float>(), w.data_ptr<float>(), has_bias ? bias.data_ptr<float>() : nullptr,
                 o->data_ptr<float>(), m, k, n);
    return;
  }
  if (dim == 2) {
    if (at::Tensor* o = reusableOut(ctx, 0, x.scalar_type())) {
      if (has_bias)
        at::cpu::addmm_out(*o, bias, x, wt);
      else
        at::cpu::mm_out(*o, x, wt);
    } else {
      ctx.output(0) = has_bias ? at::cpu::addmm(bias, x, wt) : at::cpu::mm(x, wt);
    }
    return;
  }
  if (dim < 3 || !x.is_contiguous() || x.size(-1) != w.size(1)) {
    ctx.output(0) = at::linear(x, w, has_bias ? c10::optional<at::Tensor>(bias) : c10::nullopt);
    return;
  }
  // Contiguous N-D input: one GEMM over the flattened leading dims.
  const int64_t k = x.size(-1);
  const int64_t n_out = w.size(0);
  const int64_t m = k == 0 ? 0 : x.numel() / k;
  at::Tensor x2 = x.view({m, k});
  c10::SmallVector<int64_t, 6> out_sizes(x.sizes().begin(), x.sizes().end());
  out_sizes.back() = n_out;
  at::Tensor* o = retainedOut(ctx, 0, x.scalar_type());
  if (o && o->is_contiguous()) {
    at::native::resize_(*o, out_sizes, c10::nullopt);
    at::Tensor o2 = o->view({m, n_out});
    if (has_bias)
      at::cpu::addmm_out(o2, bias, x2, wt);
    else
      at::cpu::mm_out(o2, x2, wt);
    return;
  }
  at::Tensor r = has_bias ? at::cpu::addmm(bias, x2, wt) : at::cpu::mm(x2, wt);
  ctx.output(0) = r.view(out_sizes);
}

}  // namespace

// --- linear at small batch: brisk's GEMM --------------------------------------------

// `bias` as n contiguous floats added to every row, or undefined when it is not one row
// broadcast over the result ([n], [1, n], or one value: [], [1], [1, 1]).
at::Tensor rowBias(const at::Tensor& bias, int64_t n) {
  if (bias.scalar_type() != at::kFloat || !isDenseCpu(bias) || bias.dim() > 2) return at::Tensor();
  if (bias.dim() == 2 && bias.size(0) != 1) return at::Tensor();
  if (bias.numel() != n && bias.numel() != 1) return at::Tensor();
  return bias.reshape({-1}).expand({n}).contiguous();
}

// Whether the packed kernel can serve this weight W^T ([K, N], any strides) and bias
// at all (rows are checked per call).
bool smallGemmServes(const at::Tensor& wt, const at::Tensor& bias) {
  if (!smallGemmAvailable() || wt.scalar_type() != at::kFloat || wt.dim() != 2 || !isDenseCpu(wt)) return false;
  return !bias.defined() || rowBias(bias, wt.size(1)).defined();
}

// Packs W^T ([K, N]: linear's weight transposed, or addmm's mat2).
PackedLinear packLinear(const at::Tensor& wt, const at::Tensor& bias) {
  const int64_t k = wt.size(0), n = wt.size(1);
  at::Tensor packed = at::empty({smallGemmPackedSize(k, n)}, wt.options());
  smallGemmPack(wt.data_ptr<float>(), wt.stride(0), wt.stride(1), k, n, packed.data_ptr<float>());
  return {packed, bias.defined() ? rowBias(bias, n) : at::Tensor(), k, n};
}

void packedLinear(const float* x, int64_t m, const PackedLinear& p, float* y) {
  const float* wp = p.packed.data_ptr<float>();
  const float* bp = p.bias.defined() ? p.bias.data_ptr<float>() : nullptr;
  forPlanes(smallGemmPanels(p.n), m * p.k * kSmallGemmPanelCols,
            [&](int64_t begin, int64_t end) { smallGemm(x, p.k, wp, bp, y, p.n, m, p.k, p.n, begin, end); });
}

namespace {

// y = x W^T + b through the packed kernel; false (nothing written) when x is not a
// contiguous fp32 tensor [..., K] of a row count smallGemmTakes().
bool runSmallGemm(KernelContext& ctx, const at::Tensor& x, const PackedLinear& p) {
  if (x.scalar_type() != at::kFloat || !isDenseCpu(x) || x.dim() < 1 || x.size(-1) != p.k || !x.is_contiguous())
    return false;
  int64_t m = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) m *= x.size(d);
  if (!smallGemmTakes(m, p.k, p.n)) return false;
  c10::SmallVector<int64_t, 6> out_sizes(x.sizes().begin(), x.sizes().end());
  out_sizes.back() = p.n;
  at::Tensor& y = sizedOut(ctx, out_sizes, x.options());
  if (m == 0 || p.n == 0) return true;
  packedLinear(x.data_ptr<float>(), m, p, y.data_ptr<float>());
  return true;
}

std::unique_ptr<Kernel> linear(KernelBuildContext& b, bool small_gemm) {
  if (numInputs(b) != 3) return nullptr;
  at::Tensor w = constTensor(b, 1);
  const bool const_bias = isConst(b, 2);
  at::Tensor bias;
  if (const_bias) {
    const c10::IValue& bv = constant(b, 2);
    if (bv.isTensor())
      bias = bv.toTensor();
    else if (!bv.isNone())
      return nullptr;
  }
  if (w.defined() && w.dim() == 2 && small_gemm && const_bias && smallGemmServes(w.t(), bias) &&
      (!bias.defined() || bias.dim() == 1)) {
    // Packed weight for small inputs; larger ones take ATen's addmm on the weight as
    // given.
    PackedLinear p = packLinear(w.t(), bias);
    at::Tensor wt = w.t();
    return makeKernel(std::string("brisk small_gemm (") + smallGemmRowsText() +
                          (bias.defined() ? ") / at::cpu::addmm_out(bias, x, W^T)" : ") / at::cpu::mm_out(x, W^T)"),
                      [p, w, wt, bias](KernelContext& ctx) {
                        const at::Tensor& x = ctx.tensor(0);
                        if (!runSmallGemm(ctx, x, p)) runLinear(ctx, x, w, wt, bias);
                      });
  }
  if (w.defined() && w.dim() == 2 && isDenseCpu(w) && const_bias) {
    at::Tensor wt = w.t();
    return makeKernel(bias.defined() ? "sgemm_ / at::cpu::addmm_out(bias, x, W^T)" : "sgemm_ / at::cpu::mm_out(x, W^T)",
                      [w, wt, bias](KernelContext& ctx) { runLinear(ctx, ctx.tensor(0), w, wt, bias); });
  }
  // Weight / bias computed at run time (e.g. attention's in-projection chunks).
  return makeKernel("at::cpu::addmm_out(bias, x, W^T) (runtime weight)", [](KernelContext& ctx) {
    const at::Tensor& w = ctx.tensor(1);
    const c10::IValue& bv = ctx.input(2);
    static const at::Tensor kNoBias;
    const at::Tensor& bias = bv.isTensor() ? bv.toTensor() : kNoBias;
    if (w.dim() != 2) {
      ctx.output(0) = at::linear(ctx.tensor(0), w, bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt);
      return;
    }
    runLinear(ctx, ctx.tensor(0), w, w.t(), bias);
  });
}

// --- addmm / mm with a constant weight (core ATen IR's linear) ---------------------------

bool isOne(const c10::Scalar& s) {
  if (s.isIntegral(/*includeBool=*/false)) return s.toLong() == 1;
  return s.isFloatingPoint() && s.toDouble() == 1.0;
}

// addmm(bias, x, mat2, beta=1, alpha=1) (kHasBias) or mm(x, mat2) with mat2 a constant
// fp32 [K, N] (any strides) and a constant fp32 bias of at most 2 dims: linear with
// W = mat2^T. Declines anything else (the generic addmm / mm kernels take it).
template <bool kHasBias>
std::unique_ptr<Kernel> constWeightMm(KernelBuildContext& b, bool small_gemm) {
  constexpr size_t kX = kHasBias ? 1 : 0;
  if (numInputs(b) != (kHasBias ? 5u : 2u)) return nullptr;
  const at::Tensor wt = constTensor(b, kX + 1);
  if (!wt.defined() || wt.dim() != 2 || wt.scalar_type() != at::kFloat || !isDenseCpu(wt)) return nullptr;
  at::Tensor bias;
  if (kHasBias) {
    bias = constTensor(b, 0);
    auto beta = constScalar(b, 3), alpha = constScalar(b, 4);
    if (!bias.defined() || bias.scalar_type() != at::kFloat || !isDenseCpu(bias) || bias.dim() > 2 || !beta ||
        !alpha || !isOne(*beta) || !isOne(*alpha))
      return nullptr;
  }
  const at::Tensor w = wt.t();
  std::optional<PackedLinear> packed;
  if (small_gemm && smallGemmServes(wt, bias)) packed = packLinear(wt, bias);
  std::string desc = kHasBias ? "sgemm_ / at::cpu::addmm_out(bias, x, mat2) (constant mat2)"
                              : "sgemm_ / at::cpu::mm_out(x, mat2) (constant mat2)";
  if (packed) desc = std::string("brisk small_gemm (") + smallGemmRowsText() + ") / " + desc;
  return makeKernel(desc, [packed, w, wt, bias](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(kX);
    if (x.dim() != 2 || !isDenseCpu(x) || x.scalar_type() != at::kFloat) {
      ctx.output(0) = kHasBias ? at::addmm(bias, x, wt) : at::mm(x, wt);  // ATen's result or error
      return;
    }
    if (packed && runSmallGemm(ctx, x, *packed)) return;
    runLinear(ctx, x, w, wt, bias);
  });
}

// --- mm / bmm / addmm / baddbmm / matmul -----------------------------------------------

template <bool kBatched>
std::unique_ptr<Kernel> mm(KernelBuildContext& b) {
  if (numInputs(b) != 2) return nullptr;
  return makeKernel(kBatched ? "at::cpu::bmm_out" : "at::cpu::mm_out", [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    const at::Tensor& y = ctx.tensor(1);
    if (!isDenseCpu(x) || !isDenseCpu(y) || x.scalar_type() != y.scalar_type()) {
      ctx.output(0) = kBatched ? at::bmm(x, y) : at::mm(x, y);
      return;
    }
    writeOut(
        ctx, x.scalar_type(),
        [&](at::Tensor& o) {
          if (kBatched)
            at::cpu::bmm_out(o, x, y);
          else
            at::cpu::mm_out(o, x, y);
        },
        [&] { return kBatched ? at::cpu::bmm(x, y) : at::cpu::mm(x, y); });
  });
}

template <bool kBatched>
std::unique_ptr<Kernel> addmm(KernelBuildContext& b) {
  if (numInputs(b) != 5) return nullptr;
  auto beta = constScalar(b, 3), alpha = constScalar(b, 4);
  if (!beta || !alpha) return nullptr;
  c10::Scalar be = *beta, al = *alpha;
  return makeKernel(kBatched ? "at::cpu::baddbmm_out" : "at::cpu::addmm_out", [be, al](KernelContext& ctx) {
    const at::Tensor& s = ctx.tensor(0);
    const at::Tensor& x = ctx.tensor(1);
    const at::Tensor& y = ctx.tensor(2);
    if (!isDenseCpu(s) || !isDenseCpu(x) || !isDenseCpu(y) || x.scalar_type() != y.scalar_type() ||
        s.scalar_type() != x.scalar_type()) {
      ctx.output(0) = kBatched ? at::baddbmm(s, x, y, be, al) : at::addmm(s, x, y, be, al);
      return;
    }
    writeOut(
        ctx, x.scalar_type(),
        [&](at::Tensor& o) {
          if (kBatched)
            at::cpu::baddbmm_out(o, s, x, y, be, al);
          else
            at::cpu::addmm_out(o, s, x, y, be, al);
        },
        [&] { return kBatched ? at::cpu::baddbmm(s, x, y, be, al) : at::cpu::addmm(s, x, y, be, al); });
  });
}

std::unique_ptr<Kernel> matmul(KernelBuildContext& b) {
  if (numInputs(b) != 2) return nullptr;
  return makeKernel("at::native::matmul_out", [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    const at::Tensor& y = ctx.tensor(1);
    if (!isDenseCpu(x) || !isDenseCpu(y) || x.scalar_type() != y.scalar_type()) {
      ctx.output(0) = at::matmul(x, y);
      return;
    }
    writeOut(
        ctx, x.scalar_type(), [&](at::Tensor& o) { at::native::matmul_out(x, y, o); },
        [&] { return at::matmul(x, y); });
  });
}

}  // namespace

bool smallGemmTakes(int64_t m, int64_t k, int64_t n) {
  if (cpuHasAvx512()) return m <= 8;
  return m <= 256 || k * n < (int64_t{1} << 20);
}
const char* smallGemmRowsText() {
  return cpuHasAvx512() ? "<= 8 rows" : "any rows; > 256 rows only for weights under 1M floats";
}

PluginOption<bool> declareSmallGemmOption(PluginRegistrar& r) {
  return r.option<bool>(
      "small_gemm", true,
      "linear layers with frozen fp32 weights run brisk's own AVX2 kernel on a weight packed at load instead of "
      "MKL's `sgemm_` (inputs of any row count on AVX2-only CPUs, up to 8 rows on AVX-512 ones): 1.1-3.8x faster "
      "(`bazel run //tools/bench:kernel_bench`); results differ from ATen's in the last bits (fixed FMA order); "
      "off: ATen's exact BLAS call");
}

void registerLinear(PluginRegistrar& r) {
  initBlas();
  const PluginOption<bool> small_gemm = declareSmallGemmOption(r);
  r.outVariant("aten::linear", [small_gemm](KernelBuildContext& b) { return linear(b, b.pluginOption(small_gemm)); });
  r.outVariant("aten::mm", mm<false>);
  r.outVariant("aten::bmm", mm<true>);
  r.outVariant("aten::addmm", addmm<false>);
  // Tried first (newest registration); declines unless mat2 is a constant.
  r.outVariant("aten::mm", [small_gemm](KernelBuildContext& b) {
    return constWeightMm<false>(b, b.pluginOption(small_gemm));
  });
  r.outVariant("aten::addmm", [small_gemm](KernelBuildContext& b) {
    return constWeightMm<true>(b, b.pluginOption(small_gemm));
  });
  r.outVariant("aten::baddbmm", addmm<true>);
  r.outVariant("aten::matmul", matmul);
}

}  // namespace brisk::ops_cpu::out
