// Padding and nearest-neighbour resizing into the retained (plannable) output:
// pad / constant_pad_nd (constant mode here; reflect and replicate through ATen's CPU
// out kernels) and upsample_nearest{1,2,3}d in both overloads (.vec from TorchScript and
// torch.export's aten IR; output_size + scales from the core IR).
#include <ATen/CPUFunctions.h>
#include <ATen/native/UpSample.h>
#include <ATen/ops/resize_native.h>

#include <array>

#include "ops_cpu/native/common.h"
#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {
namespace {

using SizeVec = c10::SmallVector<int64_t, 8>;

// --- constant padding ------------------------------------------------------------------

// The padded sizes of `x` for constant_pad_nd's `pad` (pairs from the last dim
// backwards; negative entries crop), or false where ATen would raise (odd length, more
// pairs than dims, a negative size): the caller then lets ATen raise it.
bool paddedSizes(const at::Tensor& x, c10::IntArrayRef pad, SizeVec& sizes) {
  const int64_t pairs = static_cast<int64_t>(pad.size()) / 2;
  if (pad.size() % 2 != 0 || pairs > x.dim()) return false;
  sizes.assign(x.sizes().begin(), x.sizes().end());
  for (int64_t i = 0; i < pairs; ++i) {
    int64_t& n = sizes[x.dim() - 1 - i];
    n += pad[2 * i] + pad[2 * i + 1];
    if (n < 0) return false;
  }
  return true;
}

// constant_pad_nd's values: the output filled with `value`, then the (cropped) input
// copied into its place. ATen's output follows the input's suggested memory format;
// this one is contiguous, so other layouts, and bad arguments, take ATen's op.
void constantPad(KernelContext& ctx, const at::Tensor& x, c10::IntArrayRef pad, const c10::Scalar& value) {
  SizeVec sizes;
  if (!isDenseCpu(x) || x.suggest_memory_format() != at::MemoryFormat::Contiguous || !paddedSizes(x, pad, sizes)) {
    ctx.output(0) = at::constant_pad_nd(x, pad, value);
    return;
  }
  at::Tensor& o = sizedOut(ctx, sizes, x.options());
  if (o.numel() == 0) return;
  at::Tensor src = x, dst = o;
  bool grows = false;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t d = x.dim() - 1 - static_cast<int64_t>(i), lo = pad[2 * i], hi = pad[2 * i + 1];
    grows = grows || lo > 0 || hi > 0;
    const int64_t crop_lo = std::max<int64_t>(-lo, 0), crop_hi = std::max<int64_t>(-hi, 0);
    const int64_t len = x.size(d) - crop_lo - crop_hi;
    if (len <= 0) {  // all padding: nothing of the input lands in the output
      o.fill_(value);
      return;
    }
    src = src.narrow(d, crop_lo, len);
    dst = dst.narrow(d, std::max<int64_t>(lo, 0), len);
  }
  if (grows) o.fill_(value);
  dst.copy_(src);
}

// constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) (core ATen IR's F.pad).
std::unique_ptr<Kernel> constantPadNd(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  native::IntListArg pad_arg(b.node(), 1);  // constant, or computed per run
  const ScalarArg value = scalarArg(b, 2);
  return makeKernel("brisk fill + copy (constant_pad_nd)", [pad_arg, value](KernelContext& ctx) {
    native::IntVec buf;
    constantPad(ctx, ctx.tensor(0), pad_arg.get(ctx, buf), value.get(ctx));
  });
}

// reflection_pad{1,2,3}d_out / replication_pad{1,2,3}d_out by the number of padded
// dims, as aten::pad chooses them; null for any other count.
using PadOutFn = at::Tensor& (*)(at::Tensor&, const at::Tensor&, at::IntArrayRef);
PadOutFn padOutFn(const std::string& mode, size_t pairs) {
  static constexpr PadOutFn kReflect[] = {at::cpu::reflection_pad1d_out, at::cpu::reflection_pad2d_out,
                                          at::cpu::reflection_pad3d_out};
  static constexpr PadOutFn kReplicate[] = {at::cpu::replication_pad1d_out, at::cpu::replication_pad2d_out,
                                            at::cpu::replication_pad3d_out};
  if (pairs < 1 || pairs > 3) return nullptr;
  if (mode == "reflect") return kReflect[pairs - 1];
  if (mode == "replicate") return kReplicate[pairs - 1];
  return nullptr;
}

// pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) with constant
// pad and mode. Reflect / replicate with an input of the rank ATen accepts for that
// many pairs (batched or not) call the CPU out kernel aten::pad would reach; other
// ranks, and circular mode, are declined (aten::pad raises or decomposes them).
std::unique_ptr<Kernel> pad(KernelBuildContext& b) {
  if (numInputs(b) != 4 || !isConst(b, 2) || !constant(b, 2).isString()) return nullptr;
  const std::string mode = constant(b, 2).toStringRef();
  if (mode == "constant") {
    // The amounts may be computed per run (Swin pads each window stage to a multiple of
    // the window size).
    native::IntListArg pad_arg(b.node(), 1);
    return makeKernel("brisk fill + copy (constant pad)", [pad_arg](KernelContext& ctx) {
      native::IntVec buf;
      const c10::IValue& v = ctx.input(3);
      constantPad(ctx, ctx.tensor(0), pad_arg.get(ctx, buf), c10::Scalar(v.isNone() ? 0.0 : v.toDouble()));
    });
  }
  auto pad = constInts(b, 1);
  if (!pad) return nullptr;
  if (!isConstNone(b, 3) || pad->size() % 2 != 0) return nullptr;  // a value outside constant mode: ATen's error
  const size_t pairs = pad->size() / 2;
  PadOutFn fn = padOutFn(mode, pairs);
  if (!fn) return nullptr;
  const std::string family = mode == "reflect" ? "reflection" : "replication";
  return makeKernel("at::cpu::" + family + "_pad" + std::to_string(pairs) + "d_out",
                    [pad = *pad, fn, pairs](KernelContext& ctx) {
                      const at::Tensor& x = ctx.tensor(0);
                      const int64_t rank = x.dim(), p = static_cast<int64_t>(pairs);
                      if (!isDenseCpu(x) || (rank != p + 1 && rank != p + 2)) {
                        ctx.output(0) = at::pad(x, pad, ctx.input(2).toStringRef(), c10::nullopt);
                        return;
                      }
                      writeOut(
                          ctx, x.scalar_type(), [&](at::Tensor& o) { fn(o, x, pad); },
                          [&] { return at::pad(x, pad, ctx.input(2).toStringRef(), c10::nullopt); });
                    });
}

// --- upsample_nearest ------------------------------------------------------------------

// Reads an optional float list into `out`; false for None.
bool readDoubles(const c10::IValue& v, c10::SmallVector<double, 3>& out) {
  out.clear();
  if (v.isNone()) return false;
  for (const c10::IValue& e : v.toListRef()) out.push_back(e.toDouble());
  return true;
}
bool readInts(const c10::IValue& v, SizeVec& out) {
  out.clear();
  if (v.isNone()) return false;
  for (const c10::IValue& e : v.toListRef()) out.push_back(e.toInt());
  return true;
}

using Scales = std::array<std::optional<double>, 3>;

// upsample_nearest{N}d.out(self, output_size, scales...) for N = 1, 2, 3.
template <int N>
at::Tensor& upsampleOut(at::Tensor& o, const at::Tensor& x, c10::IntArrayRef size, const Scales& s) {
  if constexpr (N == 1) return at::cpu::upsample_nearest1d_out(o, x, size, s[0]);
  if constexpr (N == 2) return at::cpu::upsample_nearest2d_out(o, x, size, s[0], s[1]);
  if constexpr (N == 3) return at::cpu::upsample_nearest3d_out(o, x, size, s[0], s[1], s[2]);
}
template <int N>
at::Tensor upsampleFresh(const at::Tensor& x, c10::IntArrayRef size, const Scales& s) {
  if constexpr (N == 1) return at::upsample_nearest1d(x, size, s[0]);
  if constexpr (N == 2) return at::upsample_nearest2d(x, size, s[0], s[1]);
  if constexpr (N == 3) return at::upsample_nearest3d(x, size, s[0], s[1], s[2]);
}

template <int N>
void upsampleInto(KernelContext& ctx, const at::Tensor& x, c10::IntArrayRef size, const Scales& s) {
  if (!isDenseCpu(x)) {
    ctx.output(0) = upsampleFresh<N>(x, size, s);
    return;
  }
  writeOut(
      ctx, x.scalar_type(), [&](at::Tensor& o) { upsampleOut<N>(o, x, size, s); },
      [&] { return upsampleFresh<N>(x, size, s); });
}

// upsample_nearest{N}d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors):
// ATen's own size rule (compute_output_size) and per-dim scales, then the out kernel.
template <int N>
std::unique_ptr<Kernel> upsampleVec(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  return makeKernel("at::cpu::upsample_nearest" + std::to_string(N) + "d_out", [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    SizeVec size_buf;
    c10::SmallVector<double, 3> scale_buf;
    const bool has_size = readInts(ctx.input(1), size_buf);
    const bool has_scales = readDoubles(ctx.input(2), scale_buf);
    const at::OptionalIntArrayRef size = has_size ? at::OptionalIntArrayRef(size_buf) : c10::nullopt;
    const std::optional<c10::ArrayRef<double>> scales =
        has_scales ? std::optional<c10::ArrayRef<double>>(scale_buf) : std::nullopt;
    const auto osize = at::native::upsample::compute_output_size(x.sizes(), size, scales);
    Scales s;
    for (int i = 0; i < N; ++i) s[i] = at::native::upsample::get_scale_value(scales, i);
    upsampleInto<N>(ctx, x, osize, s);
  });
}

// upsample_nearest{N}d(Tensor self, SymInt[N] output_size, float? scales...) (core IR).
template <int N>
std::unique_ptr<Kernel> upsampleSized(KernelBuildContext& b) {
  if (numInputs(b) != static_cast<size_t>(2 + N)) return nullptr;
  return makeKernel("at::cpu::upsample_nearest" + std::to_string(N) + "d_out", [](KernelContext& ctx) {
    SizeVec size;
    readInts(ctx.input(1), size);
    Scales s;
    for (int i = 0; i < N; ++i) {
      const c10::IValue& v = ctx.input(2 + i);
      if (!v.isNone()) s[i] = v.toDouble();
    }
    upsampleInto<N>(ctx, ctx.tensor(0), size, s);
  });
}

}  // namespace

void registerResizePad(PluginRegistrar& r) {
  r.outVariant("aten::pad", pad);
  r.outVariant("aten::constant_pad_nd", constantPadNd);
  r.outVariant("aten::upsample_nearest1d.vec", upsampleVec<1>);
  r.outVariant("aten::upsample_nearest2d.vec", upsampleVec<2>);
  r.outVariant("aten::upsample_nearest3d.vec", upsampleVec<3>);
  r.outVariant("aten::upsample_nearest1d", upsampleSized<1>);
  r.outVariant("aten::upsample_nearest2d", upsampleSized<2>);
  r.outVariant("aten::upsample_nearest3d", upsampleSized<3>);
}

}  // namespace brisk::ops_cpu::out
