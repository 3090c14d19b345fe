// Normalization: layer_norm (ATen's LayerNormKernel stub writing into the reused output,
// without the mean/rstd side outputs), batch_norm in inference mode with constant
// statistics (folded at load into per-channel alpha/beta, as ATen's CPU kernel does:
// out = x * alpha + beta).
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

#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {
namespace {

// layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias,
//            float eps, bool cudnn_enable)
std::unique_ptr<Kernel> layerNorm(KernelBuildContext& b) {
  if (numInputs(b) != 6) return nullptr;
  auto shape = constInts(b, 1);
  auto eps = constDouble(b, 4);
  if (!shape || !eps || !isConst(b, 2) || !isConst(b, 3)) return nullptr;
  const c10::IValue& wv = constant(b, 2);
  const c10::IValue& bv = constant(b, 3);
  if ((!wv.isNone() && !wv.isTensor()) || (!bv.isNone() && !bv.isTensor())) return nullptr;
  at::Tensor gamma = wv.isTensor() ? wv.toTensor().contiguous() : at::Tensor();
  at::Tensor beta = bv.isTensor() ? bv.toTensor().contiguous() : at::Tensor();
  if ((gamma.defined() && !isDenseCpu(gamma)) || (beta.defined() && !isDenseCpu(beta))) return nullptr;
  c10::optional<at::Tensor> gamma_opt, beta_opt;
  if (gamma.defined()) gamma_opt = gamma;
  if (beta.defined()) beta_opt = beta;
  std::vector<int64_t> ns = *shape;
  const double e = *eps;
  return makeKernel("at::native::LayerNormKernel", [ns, e, gamma, beta, gamma_opt, beta_opt](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    const auto st = x.scalar_type();
    if (!isDenseCpu(x) || (st != at::kFloat && st != at::kDouble) || (gamma.defined() && gamma.scalar_type() != st) ||
        (beta.defined() && beta.scalar_type() != st)) {
      ctx.output(0) = at::layer_norm(x, ns, gamma_opt, beta_opt, e);
      return;
    }
    auto mn = at::native::_check_layer_norm_inputs(x, ns, gamma, beta);
    c10::MaybeOwned<at::Tensor> xc = x.expect_contiguous();
    at::Tensor* o = reusableOut(ctx, 0, st);
    if (!o) {
      ctx.output(0) = at::empty({0}, x.options());
      o = &ctx.output(0).toTensor();
    }
    at::native::resize_(*o, x.sizes(), c10::nullopt);
    if (mn.first <= 0) return;
    at::native::LayerNormKernel(at::kCPU, *xc, gamma, beta, mn.first, mn.second, e, o, nullptr, nullptr);
  });
}

// batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean,
//            Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled)
std::unique_ptr<Kernel> batchNorm(KernelBuildContext& b) {
  if (numInputs(b) != 9) return nullptr;
  auto training = constBool(b, 5);
  auto eps = constDouble(b, 7);
  if (!training || *training || !eps) return nullptr;
  at::Tensor mean = constTensor(b, 3), var = constTensor(b, 4);
  if (!mean.defined() || !var.defined() || !isConst(b, 1) || !isConst(b, 2)) return nullptr;
  const c10::IValue& wv = constant(b, 1);
  const c10::IValue& bv = constant(b, 2);
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
  c10::optional<at::Tensor> w_opt = wv.isTensor() ? c10::optional<at::Tensor>(wv.toTensor()) : c10::nullopt;
  c10::optional<at::Tensor> b_opt = bv.isTensor() ? c10::optional<at::Tensor>(bv.toTensor()) : c10::nullopt;
  const double e = *eps;
  const c10::Scalar one(1);
  return makeKernel("at::cpu::addcmul_out(beta, x, alpha)",
                    [alphas, betas, channels, mean, var, w_opt, b_opt, e, one](KernelContext& ctx) {
                      const at::Tensor& x = ctx.tensor(0);
                      const int64_t r = x.dim();
                      if (!isDenseCpu(x) || r < 2 || r > 5 || x.size(1) != channels ||
                          x.scalar_type() != alphas[2].scalar_type()) {
                        ctx.output(0) = at::batch_norm(x, w_opt, b_opt, mean, var, false, 0.0, e, false);
                        return;
                      }
                      writeOut(
                          ctx, x.scalar_type(),
                          [&](at::Tensor& o) { at::cpu::addcmul_out(o, betas[r], x, alphas[r], one); },
                          [&] { return at::cpu::addcmul(betas[r], x, alphas[r], one); });
                    });
}

}  // namespace

void registerNorms(PluginRegistrar& r) {
  r.outVariant("aten::layer_norm", layerNorm);
  r.outVariant("aten::batch_norm", batchNorm);
}

}  // namespace brisk::ops_cpu::out
