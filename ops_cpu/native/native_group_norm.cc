// native_group_norm, the core ATen IR's form of group_norm (det_head / audio_1d
// programs): ATen's GroupNormKernel stub writing into the reused outputs (Y, mean, rstd;
// the stub always writes all three), as norms.cc does for layer norm.
//
// Defined for the same reason as in ops_cpu/out_variant/norms.cc: libtorch was built with
// these, so calls through the exported stub take its per-ISA kernel pointers.
#ifndef HAVE_AVX512_CPU_DEFINITION
#define HAVE_AVX512_CPU_DEFINITION
#endif
#ifndef HAVE_AVX2_CPU_DEFINITION
#define HAVE_AVX2_CPU_DEFINITION
#endif
#include <ATen/native/group_norm.h>
#include <ATen/ops/resize_native.h>

#include "ops_cpu/native/common.h"
#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::native {
namespace {

struct GroupNormArgs {
  at::Tensor gamma, beta;  // contiguous, or undefined
  std::optional<at::Tensor> gamma_opt, beta_opt;
  int64_t group = 0;
  double eps = 0;
};

// Y, mean and rstd for a contiguous float / double x with same-dtype (or no) affine
// parameters; false (nothing written) for what the caller passes to ATen's op.
bool groupNormDirect(KernelContext& ctx, const GroupNormArgs& a, int64_t n, int64_t c, int64_t hxw) {
  const at::Tensor& x = ctx.tensor(0);
  const auto st = x.scalar_type();
  if (!out::isDenseCpu(x) || !x.is_contiguous() || (st != at::kFloat && st != at::kDouble) ||
      (a.gamma.defined() && a.gamma.scalar_type() != st) || (a.beta.defined() && a.beta.scalar_type() != st) ||
      a.group <= 0 || c % a.group != 0 || x.numel() != n * c * hxw || (a.gamma.defined() && a.gamma.numel() != c) ||
      (a.beta.defined() && a.beta.numel() != c))
    return false;
  at::Tensor* outs[3];
  for (size_t i = 0; i < 3; ++i) {
    outs[i] = out::reusableOut(ctx, i, st);
    if (!outs[i]) {
      ctx.output(i) = at::empty({0}, x.options());
      outs[i] = &ctx.output(i).toTensor();
    }
  }
  at::native::resize_(*outs[0], x.sizes(), c10::nullopt);
  at::native::resize_(*outs[1], {n, a.group}, c10::nullopt);
  at::native::resize_(*outs[2], {n, a.group}, c10::nullopt);
  at::native::GroupNormKernel(at::kCPU, x, a.gamma, a.beta, n, c, hxw, a.group, a.eps, *outs[0], *outs[1], *outs[2]);
  return true;
}

// native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C,
//                   SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)
std::unique_ptr<Kernel> nativeGroupNorm(KernelBuildContext& b) {
  if (out::numInputs(b) != 8 || b.node().outputs().size() != 3) return nullptr;
  auto group = out::constInt(b, 6);
  auto eps = out::constDouble(b, 7);
  if (!group || !eps || !out::isConst(b, 1) || !out::isConst(b, 2)) return nullptr;
  const c10::IValue& wv = out::constant(b, 1);
  const c10::IValue& bv = out::constant(b, 2);
  if ((!wv.isNone() && !wv.isTensor()) || (!bv.isNone() && !bv.isTensor())) return nullptr;
  GroupNormArgs a;
  a.group = *group;
  a.eps = *eps;
  a.gamma = wv.isTensor() ? wv.toTensor().contiguous() : at::Tensor();
  a.beta = bv.isTensor() ? bv.toTensor().contiguous() : at::Tensor();
  if ((a.gamma.defined() && !out::isDenseCpu(a.gamma)) || (a.beta.defined() && !out::isDenseCpu(a.beta))) return nullptr;
  if (a.gamma.defined()) a.gamma_opt = a.gamma;
  if (a.beta.defined()) a.beta_opt = a.beta;
  return out::makeKernel("at::native::GroupNormKernel", [a = std::move(a)](KernelContext& ctx) {
    const int64_t n = ctx.input(3).toInt(), c = ctx.input(4).toInt(), hxw = ctx.input(5).toInt();
    if (groupNormDirect(ctx, a, n, c, hxw)) return;
    auto r = at::native_group_norm(ctx.tensor(0), a.gamma_opt, a.beta_opt, n, c, hxw, a.group, a.eps);
    ctx.output(0) = std::move(std::get<0>(r));
    ctx.output(1) = std::move(std::get<1>(r));
    ctx.output(2) = std::move(std::get<2>(r));
  });
}

}  // namespace

void registerNativeGroupNormKernel(PluginRegistrar& r) { r.outVariant("aten::native_group_norm", nativeGroupNorm); }

}  // namespace brisk::ops_cpu::native
