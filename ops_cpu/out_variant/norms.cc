// Normalization: layer_norm / native_layer_norm (ATen's LayerNormKernel stub writing
// into the reused outputs, mean/rstd only when read), batch_norm /
// _native_batch_norm_legit_no_training in inference mode with constant
// statistics (folded at load into per-channel alpha/beta, as ATen's CPU kernel does:
// out = x * alpha + beta), group_norm (ATen's own op, its result placed in the memory
// plan by an OutputCapture: captured.h).
//
// libtorch was built with these defined (x86-64): DispatchStub's out-of-line entry
// point then takes the per-ISA kernel pointers. Defining them here makes calls through
// the (exported) LayerNormKernel stub link against the library's symbol. There is no
// public entry point to use instead: torch 2.14 declares at::native::layer_norm_cpu_out
// (what Static Runtime calls) in ATen/native/layer_norm.h, but libtorch_cpu.so does not
// export it; the at::cpu::native_layer_norm_out family always writes mean and rstd too.
#ifndef HAVE_AVX512_CPU_DEFINITION
#define HAVE_AVX512_CPU_DEFINITION
#endif
#ifndef HAVE_AVX2_CPU_DEFINITION
#define HAVE_AVX2_CPU_DEFINITION
#endif
#include <ATen/CPUFunctions.h>
#include <ATen/native/layer_norm.h>
#include <ATen/ops/resize_native.h>

#include <ATen/ops/group_norm_native.h>

#include "ops_cpu/out_variant/captured.h"

namespace brisk::ops_cpu::out {
namespace {

// An output that ATen returns as an empty tensor (batch norm's saved statistics in
// inference): the retained one made empty again (no allocation in steady state), or a
// fresh one.
void emptyOut(KernelContext& ctx, size_t i, const at::TensorOptions& opts) {
  if (!reusableOut(ctx, i, c10::typeMetaToScalarType(opts.dtype()))) ctx.output(i) = at::empty({0}, opts);
}

// --- layer norm ----------------------------------------------------------------------

// The constant arguments of layer_norm / native_layer_norm (same positions: input,
// normalized_shape, weight?, bias?, eps).
struct LayerNormArgs {
  std::vector<int64_t> shape;
  double eps = 0;
  at::Tensor gamma, beta;  // contiguous, or undefined
  c10::optional<at::Tensor> gamma_opt, beta_opt;
};

std::optional<LayerNormArgs> layerNormArgs(KernelBuildContext& b) {
  auto shape = constInts(b, 1);
  auto eps = constDouble(b, 4);
  if (!shape || !eps || !isConst(b, 2) || !isConst(b, 3)) return std::nullopt;
  const c10::IValue& wv = constant(b, 2);
  const c10::IValue& bv = constant(b, 3);
  if ((!wv.isNone() && !wv.isTensor()) || (!bv.isNone() && !bv.isTensor())) return std::nullopt;
  LayerNormArgs a;
  a.shape = *shape;
  a.eps = *eps;
  a.gamma = wv.isTensor() ? wv.toTensor().contiguous() : at::Tensor();
  a.beta = bv.isTensor() ? bv.toTensor().contiguous() : at::Tensor();
  if ((a.gamma.defined() && !isDenseCpu(a.gamma)) || (a.beta.defined() && !isDenseCpu(a.beta))) return std::nullopt;
  if (a.gamma.defined()) a.gamma_opt = a.gamma;
  if (a.beta.defined()) a.beta_opt = a.beta;
  return a;
}

// ATen's layer_norm_cpu on a dense float/double `x`: y into output 0 and, when
// `stats`, mean and rstd (shaped like x with the normalized dims 1) into outputs 1
// and 2. False (nothing written) for inputs the caller must pass to ATen's op.
bool layerNormDirect(KernelContext& ctx, const LayerNormArgs& a, bool stats) {
  const at::Tensor& x = ctx.tensor(0);
  const auto st = x.scalar_type();
  if (!isDenseCpu(x) || (st != at::kFloat && st != at::kDouble) || (a.gamma.defined() && a.gamma.scalar_type() != st) ||
      (a.beta.defined() && a.beta.scalar_type() != st))
    return false;
  auto mn = at::native::_check_layer_norm_inputs(x, a.shape, a.gamma, a.beta);
  c10::MaybeOwned<at::Tensor> xc = x.expect_contiguous();
  at::Tensor* outs[3] = {nullptr, nullptr, nullptr};
  for (size_t i = 0; i < (stats ? 3u : 1u); ++i) {
    outs[i] = reusableOut(ctx, i, st);
    if (!outs[i]) {
      ctx.output(i) = at::empty({0}, x.options());
      outs[i] = &ctx.output(i).toTensor();
    }
  }
  at::native::resize_(*outs[0], x.sizes(), c10::nullopt);
  if (stats) {
    // For float and double the statistics have the input's dtype (ATen's acc type).
    at::DimVector stat_shape(x.sizes().begin(), x.sizes().end());
    for (size_t i = stat_shape.size() - a.shape.size(); i < stat_shape.size(); ++i) stat_shape[i] = 1;
    at::native::resize_(*outs[1], stat_shape, c10::nullopt);
    at::native::resize_(*outs[2], stat_shape, c10::nullopt);
  }
  if (mn.first > 0)
    at::native::LayerNormKernel(at::kCPU, *xc, a.gamma, a.beta, mn.first, mn.second, a.eps, outs[0], outs[1], outs[2]);
  return true;
}

// layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias,
//            float eps, bool cudnn_enable)
std::unique_ptr<Kernel> layerNorm(KernelBuildContext& b) {
  if (numInputs(b) != 6) return nullptr;
  std::optional<LayerNormArgs> args = layerNormArgs(b);
  if (!args) return nullptr;
  return makeKernel("at::native::LayerNormKernel", [a = std::move(*args)](KernelContext& ctx) {
    if (!layerNormDirect(ctx, a, /*stats=*/false))
      ctx.output(0) = at::layer_norm(ctx.tensor(0), a.shape, a.gamma_opt, a.beta_opt, a.eps);
  });
}

// native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight,
//                   Tensor? bias, float eps) -> (Tensor, Tensor mean, Tensor rstd)
// (core ATen IR). Mean and rstd are computed only when something reads them; otherwise
// outputs 1 and 2 stay unset, as no node or graph output can observe them.
std::unique_ptr<Kernel> nativeLayerNorm(KernelBuildContext& b) {
  if (numInputs(b) != 5 || b.node().outputs().size() != 3) return nullptr;
  std::optional<LayerNormArgs> args = layerNormArgs(b);
  if (!args) return nullptr;
  const bool stats = outputsUsed(b.node(), 1);
  return makeKernel(stats ? "at::native::LayerNormKernel (with mean, rstd)" : "at::native::LayerNormKernel",
                    [a = std::move(*args), stats](KernelContext& ctx) {
                      if (layerNormDirect(ctx, a, stats)) return;
                      auto r = at::native_layer_norm(ctx.tensor(0), a.shape, a.gamma_opt, a.beta_opt, a.eps);
                      ctx.output(0) = std::move(std::get<0>(r));
                      ctx.output(1) = std::move(std::get<1>(r));
                      ctx.output(2) = std::move(std::get<2>(r));
                    });
}

// --- batch norm (inference) ------------------------------------------------------------

// Where a batch norm node keeps its arguments: weight, bias, running mean and var, eps.
struct BatchNormIndices {
  size_t weight, bias, mean, var, eps;
};

// Inference batch norm with constant statistics, folded at load into per-channel
// alpha/beta as ATen's CPU kernel does (out = x * alpha + beta). `generic(x, ctx)` runs
// ATen's op for inputs the fold does not serve (rank, channels, dtype, tensor kind) and
// stores its outputs; `after(ctx, x)` completes the other outputs on the fast path.
template <class Generic, class After>
std::unique_ptr<Kernel> foldedBatchNorm(KernelBuildContext& b, BatchNormIndices idx, Generic generic, After after) {
  auto eps = constDouble(b, idx.eps);
  if (!eps) return nullptr;
  at::Tensor mean = constTensor(b, idx.mean), var = constTensor(b, idx.var);
  if (!mean.defined() || !var.defined() || !isConst(b, idx.weight) || !isConst(b, idx.bias)) return nullptr;
  const c10::IValue& wv = constant(b, idx.weight);
  const c10::IValue& bv = constant(b, idx.bias);
  if ((!wv.isNone() && !wv.isTensor()) || (!bv.isNone() && !bv.isTensor())) return nullptr;
  if (mean.dim() != 1 || var.sizes() != mean.sizes() || !c10::isFloatingType(mean.scalar_type()) ||
      var.scalar_type() != mean.scalar_type())
    return nullptr;
  const int64_t channels = mean.size(0);
  at::Tensor weight = wv.isTensor() ? wv.toTensor() : at::ones({channels}, mean.options());
  at::Tensor bias = bv.isTensor() ? bv.toTensor() : at::zeros({channels}, mean.options());
  if (weight.sizes() != mean.sizes() || bias.sizes() != mean.sizes() || weight.scalar_type() != mean.scalar_type() ||
      bias.scalar_type() != mean.scalar_type())
    return nullptr;
  // ATen: invstd = 1 / sqrt(var + eps); alpha = invstd * weight; beta = bias - mean * alpha.
  at::Tensor invstd = at::reciprocal(at::sqrt(var + *eps));
  at::Tensor alpha = (invstd * weight).contiguous();
  at::Tensor beta = (bias - mean * alpha).contiguous();
  // Views [C, 1, ..., 1] for inputs of rank 2..5.
  std::vector<at::Tensor> alphas(6), betas(6);
  for (int64_t r = 2; r <= 5; ++r) {
    std::vector<int64_t> shape(r - 1, 1);
    shape[0] = channels;
    alphas[r] = alpha.view(shape);
    betas[r] = beta.view(shape);
  }
  const c10::Scalar one(1);
  return makeKernel("at::cpu::addcmul_out(beta, x, alpha)",
                    [alphas, betas, channels, one, generic, after](KernelContext& ctx) {
                      const at::Tensor& x = ctx.tensor(0);
                      const int64_t r = x.dim();
                      if (!isDenseCpu(x) || r < 2 || r > 5 || x.size(1) != channels ||
                          x.scalar_type() != alphas[2].scalar_type()) {
                        generic(x, ctx);
                        return;
                      }
                      writeOut(
                          ctx, x.scalar_type(),
                          [&](at::Tensor& o) { at::cpu::addcmul_out(o, betas[r], x, alphas[r], one); },
                          [&] { return at::cpu::addcmul(betas[r], x, alphas[r], one); });
                      after(ctx, x);
                    });
}

c10::optional<at::Tensor> optionalConst(KernelBuildContext& b, size_t i) {
  const c10::IValue& v = constant(b, i);
  return v.isTensor() ? c10::optional<at::Tensor>(v.toTensor()) : c10::nullopt;
}

// batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean,
//            Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled)
std::unique_ptr<Kernel> batchNorm(KernelBuildContext& b) {
  if (numInputs(b) != 9) return nullptr;
  auto training = constBool(b, 5);
  if (!training || *training || !isConst(b, 1) || !isConst(b, 2)) return nullptr;
  auto eps = constDouble(b, 7);
  at::Tensor mean = constTensor(b, 3), var = constTensor(b, 4);
  if (!eps || !mean.defined() || !var.defined()) return nullptr;
  const c10::optional<at::Tensor> w = optionalConst(b, 1), bias = optionalConst(b, 2);
  const double e = *eps;
  return foldedBatchNorm(
      b, {1, 2, 3, 4, 7},
      [w, bias, mean, var, e](const at::Tensor& x, KernelContext& ctx) {
        ctx.output(0) = at::batch_norm(x, w, bias, mean, var, false, 0.0, e, false);
      },
      [](KernelContext&, const at::Tensor&) {});
}

// _native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias,
//     Tensor running_mean, Tensor running_var, float momentum, float eps)
//     -> (Tensor, Tensor, Tensor)
// (core ATen IR's inference batch norm). Outputs 1 and 2 (saved mean and invstd) are
// empty tensors of the input's dtype in inference, as ATen's CPU kernel returns them.
std::unique_ptr<Kernel> nativeBatchNormNoTraining(KernelBuildContext& b) {
  if (numInputs(b) != 7 || b.node().outputs().size() != 3 || !isConst(b, 1) || !isConst(b, 2)) return nullptr;
  auto momentum = constDouble(b, 5), eps = constDouble(b, 6);
  at::Tensor mean = constTensor(b, 3), var = constTensor(b, 4);
  if (!momentum || !eps || !mean.defined() || !var.defined()) return nullptr;
  const c10::optional<at::Tensor> w = optionalConst(b, 1), bias = optionalConst(b, 2);
  const double m = *momentum, e = *eps;
  return foldedBatchNorm(
      b, {1, 2, 3, 4, 6},
      [w, bias, mean, var, m, e](const at::Tensor& x, KernelContext& ctx) {
        auto r = at::_native_batch_norm_legit_no_training(x, w, bias, mean, var, m, e);
        ctx.output(0) = std::move(std::get<0>(r));
        ctx.output(1) = std::move(std::get<1>(r));
        ctx.output(2) = std::move(std::get<2>(r));
      },
      [](KernelContext& ctx, const at::Tensor& x) {
        emptyOut(ctx, 1, x.options());
        emptyOut(ctx, 2, x.options());
      });
}

// --- group norm ------------------------------------------------------------------------

// group_norm(Tensor input, int num_groups, Tensor? weight, Tensor? bias, float eps,
//            bool cudnn_enabled). ATen's CPU path (native_group_norm) has no out form
// and allocates the statistics besides the result; under the capture those come from
// the plan's per-step scratch, so the steady state allocates nothing from the heap.
std::unique_ptr<Kernel> groupNorm(KernelBuildContext& b) {
  if (numInputs(b) != 6) return nullptr;
  auto groups = constInt(b, 1);
  auto eps = constDouble(b, 4);
  auto cudnn = constBool(b, 5);
  if (!groups || !eps || !cudnn) return nullptr;
  return makeKernel(
      "at::native::group_norm",
      [g = *groups, e = *eps, c = *cudnn](KernelContext& ctx) {
        const std::optional<at::Tensor> w = ctx.input(2).toOptional<at::Tensor>();
        const std::optional<at::Tensor> bias = ctx.input(3).toOptional<at::Tensor>();
        storeCaptured(ctx, [&] { return at::native::group_norm(ctx.tensor(0), g, w, bias, e, c); });
      },
      OutputContract::kCaptured);
}

}  // namespace

void registerNorms(PluginRegistrar& r) {
  r.outVariant("aten::layer_norm", layerNorm);
  r.outVariant("aten::batch_norm", batchNorm);
  r.outVariant("aten::native_layer_norm", nativeLayerNorm);
  r.outVariant("aten::_native_batch_norm_legit_no_training", nativeBatchNormNoTraining);
  r.outVariant("aten::group_norm", groupNorm);
}

}  // namespace brisk::ops_cpu::out
