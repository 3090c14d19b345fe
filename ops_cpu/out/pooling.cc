// Pooling: max_pool2d, avg_pool2d, adaptive_avg_pool2d.
//
// max_pool2d is ATen's max_pool2d_with_indices with the indices dropped; the indices
// go to a per-thread scratch tensor that keeps its capacity across calls (only one
// kernel runs at a time on a thread, and the indices are dead once the call returns).
// ATen's NCHW max-pool kernel is slow (1x64x112x112: ~6 ms vs ~0.5 ms channels-last),
// so a contiguous NCHW float input is pooled through channels-last scratch copies and
// the result copied back into the NCHW output: same values (max is exact), ~4x faster.
#include <ATen/CPUFunctions.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/resize_native.h>

#include "ops_cpu/out/common.h"

namespace brisk::ops_cpu::out {
namespace {

at::Tensor& indicesScratch() {
  thread_local at::Tensor t = at::empty({0}, at::TensorOptions().dtype(at::kLong));
  return t;
}

// Per-thread channels-last scratch tensors (input copy, pooled result), by dtype.
at::Tensor& clScratch(int which, at::ScalarType dtype) {
  thread_local at::Tensor t[2][2];
  at::Tensor& s = t[which][dtype == at::kDouble ? 1 : 0];
  if (!s.defined()) s = at::empty({0}, at::TensorOptions().dtype(dtype));
  return s;
}

void maxPoolViaChannelsLast(at::Tensor& out, const at::Tensor& x, at::IntArrayRef ks, at::IntArrayRef st,
                            at::IntArrayRef pad, at::IntArrayRef dil, bool cm, at::Tensor& idx) {
  at::Tensor& xin = clScratch(0, x.scalar_type());
  at::native::resize_(xin, x.sizes(), at::MemoryFormat::ChannelsLast);
  at::native::copy_(xin, x, false);
  at::Tensor& pooled = clScratch(1, x.scalar_type());
  resizeToZero(pooled);
  at::cpu::max_pool2d_with_indices_out(pooled, idx, xin, ks, st, pad, dil, cm);
  at::native::resize_(out, pooled.sizes(), c10::nullopt);
  at::native::copy_(out, pooled, false);
}

std::unique_ptr<Kernel> maxPool2d(KernelBuildContext& b) {
  if (numInputs(b) != 6) return nullptr;
  auto k = constInts(b, 1), s = constInts(b, 2), p = constInts(b, 3), d = constInts(b, 4);
  auto ceil = constBool(b, 5);
  if (!k || !s || !p || !d || !ceil) return nullptr;
  std::vector<int64_t> ks = *k, st = *s, pad = *p, dil = *d;
  const bool cm = *ceil;
  return makeKernel("at::cpu::max_pool2d_with_indices_out", [ks, st, pad, dil, cm](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x) || !c10::isFloatingType(x.scalar_type()) || (x.dim() != 3 && x.dim() != 4)) {
      ctx.output(0) = at::max_pool2d(x, ks, st, pad, dil, cm);
      return;
    }
    at::Tensor& idx = indicesScratch();
    resizeToZero(idx);
    const auto st_t = x.scalar_type();
    if (x.dim() == 4 && (st_t == at::kFloat || st_t == at::kDouble) && x.size(1) > 1 && x.is_contiguous() &&
        x.suggest_memory_format() == at::MemoryFormat::Contiguous) {
      at::Tensor* o = reusableOut(ctx, 0, st_t);
      at::Tensor fresh;
      if (!o) {
        fresh = at::empty({0}, x.options());
        o = &fresh;
      }
      maxPoolViaChannelsLast(*o, x, ks, st, pad, dil, cm, idx);
      if (fresh.defined()) ctx.output(0) = std::move(fresh);
      return;
    }
    if (at::Tensor* o = reusableOut(ctx, 0, x.scalar_type())) {
      at::cpu::max_pool2d_with_indices_out(*o, idx, x, ks, st, pad, dil, cm);
    } else {
      at::Tensor o2 = at::empty({0}, x.options());
      at::cpu::max_pool2d_with_indices_out(o2, idx, x, ks, st, pad, dil, cm);
      ctx.output(0) = std::move(o2);
    }
  });
}

std::unique_ptr<Kernel> avgPool2d(KernelBuildContext& b) {
  if (numInputs(b) != 7) return nullptr;
  auto k = constInts(b, 1), s = constInts(b, 2), p = constInts(b, 3);
  auto ceil = constBool(b, 4), cip = constBool(b, 5);
  if (!k || !s || !p || !ceil || !cip || !isConst(b, 6)) return nullptr;
  c10::optional<int64_t> divisor;
  if (constant(b, 6).isInt())
    divisor = constant(b, 6).toInt();
  else if (!constant(b, 6).isNone())
    return nullptr;
  std::vector<int64_t> ks = *k, st = *s, pad = *p;
  const bool cm = *ceil, inc = *cip;
  return makeKernel("at::cpu::avg_pool2d_out", [ks, st, pad, cm, inc, divisor](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x)) {
      ctx.output(0) = at::avg_pool2d(x, ks, st, pad, cm, inc, divisor);
      return;
    }
    writeOut(
        ctx, x.scalar_type(), [&](at::Tensor& o) { at::cpu::avg_pool2d_out(o, x, ks, st, pad, cm, inc, divisor); },
        [&] { return at::cpu::avg_pool2d(x, ks, st, pad, cm, inc, divisor); });
  });
}

// ATen: a 1x1 output is mean over (H, W) with keepdim (restrided to channels-last
// when the input is channels-last); other sizes use the adaptive pooling kernel.
std::unique_ptr<Kernel> adaptiveAvgPool2d(KernelBuildContext& b) {
  if (numInputs(b) != 2) return nullptr;
  auto os = constInts(b, 1);
  if (!os || os->size() != 2) return nullptr;
  std::vector<int64_t> size = *os;
  const bool global = size[0] == 1 && size[1] == 1;
  static const std::vector<int64_t> kHW = {-1, -2};
  return makeKernel(global ? "at::cpu::mean_out(dims={-1,-2})" : "at::cpu::adaptive_avg_pool2d_out",
                    [size, global](KernelContext& ctx) {
                      const at::Tensor& x = ctx.tensor(0);
                      if (!isDenseCpu(x) || !c10::isFloatingType(x.scalar_type()) || (x.dim() != 3 && x.dim() != 4)) {
                        ctx.output(0) = at::adaptive_avg_pool2d(x, size);
                        return;
                      }
                      if (!global) {
                        writeOut(
                            ctx, x.scalar_type(), [&](at::Tensor& o) { at::cpu::adaptive_avg_pool2d_out(o, x, size); },
                            [&] { return at::adaptive_avg_pool2d(x, size); });
                        return;
                      }
                      at::Tensor* o = reusableOut(ctx, 0, x.scalar_type());
                      if (!o) {
                        ctx.output(0) = at::empty({0}, x.options());
                        o = &ctx.output(0).toTensor();
                      }
                      at::cpu::mean_out(*o, x, kHW, /*keepdim=*/true, c10::nullopt);
                      if (x.suggest_memory_format() == at::MemoryFormat::ChannelsLast) {
                        const int64_t n = x.size(0), c = x.size(1);
                        o->as_strided_({n, c, 1, 1}, {c, 1, c, c});
                      }
                    });
}

}  // namespace

void registerPooling(PluginRegistrar& r) {
  r.outVariant("aten::max_pool2d", maxPool2d);
  r.outVariant("aten::avg_pool2d", avgPool2d);
  r.outVariant("aten::adaptive_avg_pool2d", adaptiveAvgPool2d);
}

}  // namespace brisk::ops_cpu::out
