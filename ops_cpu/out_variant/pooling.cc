// Pooling: max_pool2d, max_pool2d_with_indices, avg_pool2d, adaptive_avg_pool2d.
//
// max_pool2d on a contiguous NCHW/CHW float or double input runs maxPool2dPlanes
// (max_pool_nchw.h), and on a channels-last float input maxPool2dNhwcRows
// (max_pool_nhwc.h): ATen's values bit for bit, written straight into the output, no
// indices and no scratch tensors. (ATen's own NCHW kernel is ~10x slower than its
// channels-last one; the previous workaround pooled through per-thread channels-last
// scratch copies, which kept ~45 MiB alive for the life of the process at ResNet-18
// batch 8. ATen's channels-last kernel writes int64 indices too: 12.8 MB a call, held,
// behind ResNet-18's oneDNN stem at batch 8.) Other inputs (strided, half/bfloat16,
// channels-last double) use ATen's max_pool2d_with_indices with the indices dropped
// into a per-thread scratch tensor that keeps its capacity across calls (only one
// kernel runs at a time on a thread, and the indices are dead once the call returns);
// arguments ATen rejects also go there, so the error is ATen's.
#include <ATen/CPUFunctions.h>
#include <ATen/Parallel.h>
#include <ATen/ops/resize_native.h>

#include <limits>

#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/simd/global_avg_pool_nhwc.h"
#include "ops_cpu/simd/max_pool_nchw.h"
#include "ops_cpu/simd/max_pool_nhwc.h"

namespace brisk::ops_cpu::out {
namespace {

at::Tensor& indicesScratch() {
  thread_local at::Tensor t = at::empty({0}, at::TensorOptions().dtype(at::kLong));
  return t;
}

// max_pool2d's int[2] arguments expanded as ATen reads them ([k] means [k, k]; an
// empty stride means the kernel size), or nullopt when ATen would reject them whatever
// the input (list lengths, values out of int range, kernel/stride/dilation <= 0,
// padding < 0 or > kernel / 2).
struct MaxPoolArgs {
  PoolDim h, w;
  bool ceil_mode = false;
};

std::optional<MaxPoolArgs> maxPoolArgs(const std::vector<int64_t>& ks, const std::vector<int64_t>& st,
                                       const std::vector<int64_t>& pad, const std::vector<int64_t>& dil, bool cm) {
  if (ks.size() < 1 || ks.size() > 2 || st.size() > 2 || pad.size() < 1 || pad.size() > 2 || dil.size() < 1 ||
      dil.size() > 2)
    return std::nullopt;
  auto second = [](const std::vector<int64_t>& v) { return v.size() == 1 ? v[0] : v[1]; };
  MaxPoolArgs a;
  a.h.kernel = ks[0];
  a.w.kernel = second(ks);
  a.h.stride = st.empty() ? a.h.kernel : st[0];
  a.w.stride = st.empty() ? a.w.kernel : second(st);
  a.h.pad = pad[0];
  a.w.pad = second(pad);
  a.h.dilation = dil[0];
  a.w.dilation = second(dil);
  a.ceil_mode = cm;
  for (const PoolDim& d : {a.h, a.w}) {
    for (int64_t v : {d.kernel, d.stride, d.pad, d.dilation})
      if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) return std::nullopt;
    if (d.kernel <= 0 || d.stride <= 0 || d.dilation <= 0 || d.pad < 0 || d.pad > d.kernel / 2) return std::nullopt;
  }
  return a;
}

// Pools a contiguous NCHW/CHW float or double `x` with maxPool2dPlanes into output 0.
// False (nothing written) when ATen would reject the input's shape (an empty C/H/W
// dimension, or an output smaller than 1x1), so the caller can let ATen raise.
bool maxPoolDirect(KernelContext& ctx, const at::Tensor& x, MaxPoolArgs a) {
  const int64_t nd = x.dim();
  const int64_t c = x.size(nd - 3);
  a.h.in = x.size(nd - 2);
  a.w.in = x.size(nd - 1);
  if (c == 0 || a.h.in == 0 || a.w.in == 0) return false;
  a.h.out = maxPoolOutputSize(a.h.in, a.h.kernel, a.h.pad, a.h.stride, a.h.dilation, a.ceil_mode);
  a.w.out = maxPoolOutputSize(a.w.in, a.w.kernel, a.w.pad, a.w.stride, a.w.dilation, a.ceil_mode);
  if (a.h.out < 1 || a.w.out < 1) return false;

  at::DimVector sizes(x.sizes().begin(), x.sizes().end());
  sizes[nd - 2] = a.h.out;
  sizes[nd - 1] = a.w.out;
  at::Tensor& o = sizedOut(ctx, sizes, x.options());
  const int64_t planes = nd == 4 ? x.size(0) * c : c;
  const int64_t in_plane = a.h.in * a.w.in, out_plane = a.h.out * a.w.out;
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "brisk max_pool2d", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* out = o.data_ptr<scalar_t>();
    forPlanes(planes, in_plane, [&](int64_t begin, int64_t end) {
      maxPool2dPlanes(in + begin * in_plane, out + begin * out_plane, end - begin, a.h, a.w);
    });
  });
  return true;
}

// Pools a channels-last NCHW-shaped float `x` with maxPool2dNhwcRows into a
// channels-last output 0 (ATen's layout for such an input). False, having written
// nothing, where maxPoolDirect would be.
bool maxPoolChannelsLast(KernelContext& ctx, const at::Tensor& x, MaxPoolArgs a) {
  const int64_t n = x.size(0), c = x.size(1);
  a.h.in = x.size(2);
  a.w.in = x.size(3);
  if (n == 0 || c == 0 || a.h.in == 0 || a.w.in == 0) return false;
  a.h.out = maxPoolOutputSize(a.h.in, a.h.kernel, a.h.pad, a.h.stride, a.h.dilation, a.ceil_mode);
  a.w.out = maxPoolOutputSize(a.w.in, a.w.kernel, a.w.pad, a.w.stride, a.w.dilation, a.ceil_mode);
  if (a.h.out < 1 || a.w.out < 1) return false;
  const std::vector<int64_t> sizes{n, c, a.h.out, a.w.out};
  at::Tensor* o = reusableOut(ctx, 0, at::kFloat);
  if (o) {
    at::native::resize_(*o, sizes, at::MemoryFormat::ChannelsLast);
  } else {
    ctx.output(0) = at::empty(sizes, x.options().memory_format(at::MemoryFormat::ChannelsLast));
    o = &ctx.output(0).toTensor();
  }
  const float* in = x.data_ptr<float>();
  float* out = o->data_ptr<float>();
  forPlanes(n * a.h.out, a.w.out * c, [&](int64_t begin, int64_t end) {
    maxPool2dNhwcRows(in, out, c, a.h, a.w, begin, end);
  });
  return true;
}

// max_pool2d and max_pool2d_with_indices (same arguments). `indices`: the node's
// indices output is read, so it is computed into output 1 (ATen's kernel); otherwise
// only the values are, and output 1 stays unset (nothing can observe it).
std::unique_ptr<Kernel> maxPoolKernel(KernelBuildContext& b, bool indices) {
  if (numInputs(b) != 6) return nullptr;
  auto k = constInts(b, 1), s = constInts(b, 2), p = constInts(b, 3), d = constInts(b, 4);
  auto ceil = constBool(b, 5);
  if (!k || !s || !p || !d || !ceil) return nullptr;
  std::vector<int64_t> ks = *k, st = *s, pad = *p, dil = *d;
  const bool cm = *ceil;
  const std::optional<MaxPoolArgs> args = maxPoolArgs(ks, st, pad, dil, cm);
  return makeKernel(indices ? "at::cpu::max_pool2d_with_indices_out"
                            : "max_pool2d: direct NCHW (float/double) or NHWC (float) | at::cpu::max_pool2d_with_indices_out",
                    [ks, st, pad, dil, cm, args, indices](KernelContext& ctx) {
                      const at::Tensor& x = ctx.tensor(0);
                      if (!isDenseCpu(x) || !c10::isFloatingType(x.scalar_type()) || (x.dim() != 3 && x.dim() != 4)) {
                        if (indices) {
                          auto r = at::max_pool2d_with_indices(x, ks, st, pad, dil, cm);
                          ctx.output(0) = std::move(std::get<0>(r));
                          ctx.output(1) = std::move(std::get<1>(r));
                        } else {
                          ctx.output(0) = at::max_pool2d(x, ks, st, pad, dil, cm);
                        }
                        return;
                      }
                      const auto dt = x.scalar_type();
                      if (!indices && args && (dt == at::kFloat || dt == at::kDouble) && x.is_contiguous() &&
                          x.suggest_memory_format() == at::MemoryFormat::Contiguous && maxPoolDirect(ctx, x, *args))
                        return;
                      if (!indices && args && dt == at::kFloat && x.dim() == 4 &&
                          x.suggest_memory_format() == at::MemoryFormat::ChannelsLast &&
                          x.is_contiguous(at::MemoryFormat::ChannelsLast) && maxPoolChannelsLast(ctx, x, *args))
                        return;
                      at::Tensor* idx = indices ? reusableOut(ctx, 1, at::kLong) : nullptr;
                      if (indices && !idx) {
                        ctx.output(1) = at::empty({0}, x.options().dtype(at::kLong));
                        idx = &ctx.output(1).toTensor();
                      }
                      if (!idx) {
                        idx = &indicesScratch();
                        resizeToZero(*idx);
                      }
                      if (at::Tensor* o = reusableOut(ctx, 0, dt)) {
                        at::cpu::max_pool2d_with_indices_out(*o, *idx, x, ks, st, pad, dil, cm);
                      } else {
                        at::Tensor o2 = at::empty({0}, x.options());
                        at::cpu::max_pool2d_with_indices_out(o2, *idx, x, ks, st, pad, dil, cm);
                        ctx.output(0) = std::move(o2);
                      }
                    });
}

std::unique_ptr<Kernel> maxPool2d(KernelBuildContext& b) { return maxPoolKernel(b, /*indices=*/false); }

// max_pool2d_with_indices(...) -> (Tensor, Tensor): core ATen IR's max_pool2d.
std::unique_ptr<Kernel> maxPool2dWithIndices(KernelBuildContext& b) {
  if (b.node().outputs().size() != 2) return nullptr;
  return maxPoolKernel(b, outputsUsed(b.node(), 1));
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
                      const bool nhwc = x.suggest_memory_format() == at::MemoryFormat::ChannelsLast;
                      if (nhwc && x.scalar_type() == at::kFloat && x.size(2) * x.size(3) > 0) {
                        // Own kernel (global_avg_pool_nhwc.h): ATen's strided mean is slow here.
                        const int64_t n = x.size(0), c = x.size(1);
                        at::Tensor& o = sizedOut(ctx, {n, c, 1, 1}, x.options());
                        globalAvgPoolNhwc(x.data_ptr<float>(), o.data_ptr<float>(), n, x.size(2) * x.size(3), c);
                        o.as_strided_({n, c, 1, 1}, {c, 1, c, c});  // ATen's channels-last strides, as below
                        return;
                      }
                      at::Tensor* o = reusableOut(ctx, 0, x.scalar_type());
                      if (!o) {
                        ctx.output(0) = at::empty({0}, x.options());
                        o = &ctx.output(0).toTensor();
                      }
                      at::cpu::mean_out(*o, x, kHW, /*keepdim=*/true, c10::nullopt);
                      if (nhwc) {
                        const int64_t n = x.size(0), c = x.size(1);
                        o->as_strided_({n, c, 1, 1}, {c, 1, c, c});
                      }
                    });
}

}  // namespace

void registerPooling(PluginRegistrar& r) {
  r.outVariant("aten::max_pool2d", maxPool2d);
  r.outVariant("aten::max_pool2d_with_indices", maxPool2dWithIndices);
  r.outVariant("aten::avg_pool2d", avgPool2d);
  r.outVariant("aten::adaptive_avg_pool2d", adaptiveAvgPool2d);
}

}  // namespace brisk::ops_cpu::out
