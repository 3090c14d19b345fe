// Convolution: conv1d / conv2d / convolution / _convolution.
//
// libtorch exposes no real out form (mkldnn_convolution's ".out" is a copy of the
// functional result; the wheel ships oneDNN's headers but not ideep's, and libtorch_cpu
// exports no dnnl_* symbols, so its oneDNN cannot be called directly), so
// the kernel calls at::native::_convolution directly (skipping the conv2d ->
// convolution -> _convolution dispatcher hops and autograd wrappers) and stores its
// fresh result. The kernel's contract is kCaptured: with memory planning core retains
// and manages its output, and the call runs inside an OutputCapture
// (core/kernels/output_capture.h): the allocation that becomes the result is served at the
// output's planned slab offset, so conv outputs live in the slab with no copy and the
// same values as the interpreter's (same kernel, same arguments). Without planning core
// keeps nothing (a retained output would only hold memory between runs).
//
// Large depthwise convs on contiguous float NCHW inputs skip oneDNN: depthwise_nchw.h
// computes oneDNN's values directly into the (retained, planned) output, without the
// blocked copies of input and output that set MobileNet's peak memory and dominate
// oneDNN's time on large planes (see kDirectMinPlane).
#include <ATen/Context.h>
#include <ATen/ops/_convolution_native.h>
#include <ATen/ops/conv2d.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include <ATen/ops/conv1d.h>

#include "ops_cpu/out_variant/captured.h"
#include "ops_cpu/simd/depthwise_nchw.h"

namespace brisk::ops_cpu::out {
namespace {

c10::optional<at::Tensor> optionalTensor(const c10::IValue& v) {
  if (v.isNone()) return c10::nullopt;
  return v.toTensor();
}

// --- conv ------------------------------------------------------------------------------


struct ConvArgs {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  bool bias_const = false;
  c10::optional<at::Tensor> bias;
  // _convolution's own flags when given as constants; otherwise taken from the global
  // context at run time, as aten::convolution does.
  bool explicit_flags = false;
  bool benchmark = false, deterministic = false, cudnn_enabled = true, allow_tf32 = true;
};

// What `brisk inspect` says serves the node: the direct depthwise path can only apply
// to a grouped convolution (groups == channels), so an ungrouped one names ATen alone.
const char* convProviders(const ConvArgs& a) {
  return a.groups > 1 && !a.transposed ? "depthwise: direct NCHW (float) | at::native::_convolution"
                                       : "at::native::_convolution";
}

// The bias: the constant read at load, or input 2 (held in `storage`).
const c10::optional<at::Tensor>& biasOf(const ConvArgs& a, KernelContext& ctx, c10::optional<at::Tensor>& storage) {
  return a.bias_const ? a.bias : (storage = optionalTensor(ctx.input(2)));
}

// ATen's convolution of `x` (input 0, or a batch slice of it) with the node's weight.
at::Tensor convolve(const ConvArgs& a, KernelContext& ctx, const at::Tensor& x) {
  const at::Tensor& w = ctx.tensor(1);
  c10::optional<at::Tensor> bias_rt;
  const c10::optional<at::Tensor>& bias = biasOf(a, ctx, bias_rt);
  if (a.explicit_flags)
    return at::native::_convolution(x, w, bias, a.stride, a.padding, a.dilation, a.transposed, a.output_padding,
                                    a.groups, a.benchmark, a.deterministic, a.cudnn_enabled, a.allow_tf32);
  auto& g = at::globalContext();
  return at::native::_convolution(x, w, bias, a.stride, a.padding, a.dilation, a.transposed, a.output_padding,
                                  a.groups, g.benchmarkCuDNN(), g.deterministicCuDNN() || g.deterministicAlgorithms(),
                                  g.userEnabledCuDNN(), g.allowTF32CuDNN());
}

// Serves the result from the memory plan when the output is managed (see the top).
void runConv(const ConvArgs& a, KernelContext& ctx) {
  storeCaptured(ctx, [&] { return convolve(a, ctx, ctx.tensor(0)); });
}

// --- depthwise -------------------------------------------------------------------------

bool isFloatContiguous(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat && isDenseCpu(t) && t.is_contiguous();
}

// Output size of one spatial dimension, or <= 0 when the input is too small (ATen then
// raises its own error).
int64_t convOutputSize(ConvDim& d) {
  return d.out = (d.in + 2 * d.pad - d.dilation * (d.kernel - 1) - 1) / d.stride + 1;
}

// The two spatial dimensions (h, w) of a conv of the 4-D NCHW `x` with the 4-D weight
// `wt`, as ATen reads the arguments. False, leaving the call to ATen (which expands them,
// or raises its own error), for one-value lists, a stride or dilation below 1 (a zero
// stride would divide by zero here), negative padding, or an input too small for one
// output.
bool convGeometry(const ConvArgs& a, const at::Tensor& x, const at::Tensor& wt, ConvDim& h, ConvDim& w) {
  if (a.stride.size() != 2 || a.padding.size() != 2 || a.dilation.size() != 2) return false;
  for (size_t i = 0; i < 2; ++i)
    if (a.stride[i] < 1 || a.dilation[i] < 1 || a.padding[i] < 0) return false;
  h = ConvDim{x.size(2), 1, wt.size(2), a.stride[0], a.padding[0], a.dilation[0]};
  w = ConvDim{x.size(3), 1, wt.size(3), a.stride[1], a.padding[1], a.dilation[1]};
  return convOutputSize(h) >= 1 && convOutputSize(w) >= 1;
}

// oneDNN's depthwise kernels (whose order of operations depthwise_nchw.h reproduces)
// refuse a geometry where a window can lie wholly in the padding on either side: the
// dilated filter extent must exceed the start padding and the implied end padding.
// There oneDNN falls back to another implementation with another summation order, so
// the direct kernel does too.
bool oneDnnDepthwiseFits(const ConvDim& d) {
  const int64_t extent = (d.kernel - 1) * d.dilation + 1;
  const int64_t end_pad = (d.out - 1) * d.stride + extent - (d.in + d.pad);
  return d.pad < extent && end_pad < extent;
}

// Where the direct kernel beats oneDNN 3.x (tools/bench:kernel_bench, one thread,
// MobileNet-v2's 3x3 layers; both give the same bits, so this is speed and memory only):
// on planes of 56x56 and more with an input of at least 1M floats it is 1.3-2.8x faster
// (oneDNN's reorders into and out of its blocked layout dominate there); on smaller
// planes oneDNN's blocked kernel is 1.5-3.6x faster, and at 112x112 with few channels
// they are even.
constexpr int64_t kDirectMinPlane = 56 * 56;
constexpr int64_t kDirectMinInput = int64_t{1} << 20;

// Environment variable BRISK_DEPTHWISE_DIRECT, read once when the plugin registers:
// "auto" (default: the sizes above), "always" (every depthwise conv the direct kernel
// can serve: for CPUs where the crossover lies elsewhere, and for the tests, which check
// the kernel's bits on small shapes), "never" (always oneDNN).
enum class DirectPolicy { kAuto, kAlways, kNever };
DirectPolicy g_direct_policy = DirectPolicy::kAuto;

void readDirectPolicy() {
  const char* v = std::getenv("BRISK_DEPTHWISE_DIRECT");
  const std::string s = v ? v : "";
  if (s.empty() || s == "auto")
    g_direct_policy = DirectPolicy::kAuto;
  else if (s == "always")
    g_direct_policy = DirectPolicy::kAlways;
  else if (s == "never")
    g_direct_policy = DirectPolicy::kNever;
  else
    throw std::invalid_argument("BRISK_DEPTHWISE_DIRECT must be auto, always or never, got '" + s + "'");
}

// Runs a depthwise conv (one filter per channel) on a contiguous float NCHW input with
// depthwiseConv2dPlanes (depthwise_nchw.h): the values ATen's oneDNN path computes, bit
// for bit, written straight into output 0 with no blocked temporaries. Only where ATen
// would take that oneDNN path (oneDNN enabled; a filter larger than 1x1, which ATen's
// heuristics send to oneDNN for any group count), the CPU has FMA and the conv is large
// enough for the direct kernel to win. False (nothing done) otherwise.
bool depthwiseDirect(const ConvArgs& a, KernelContext& ctx) {
  if (g_direct_policy == DirectPolicy::kNever || a.transposed || a.groups < 2 || !depthwiseDirectAvailable())
    return false;
  const at::Tensor& x = ctx.tensor(0);
  const at::Tensor& wt = ctx.tensor(1);
  if (x.dim() != 4 || !isFloatContiguous(x) || x.size(1) != a.groups || x.numel() == 0) return false;
  if (wt.dim() != 4 || !isFloatContiguous(wt) || wt.size(0) != a.groups || wt.size(1) != 1) return false;
  if (wt.size(2) * wt.size(3) < 2) return false;
  c10::optional<at::Tensor> bias_rt;
  const c10::optional<at::Tensor>& bias = biasOf(a, ctx, bias_rt);
  if (bias && (!isFloatContiguous(*bias) || bias->dim() != 1 || bias->size(0) != a.groups)) return false;
  if (!at::globalContext().userEnabledMkldnn()) return false;
  ConvDim h, w;
  if (!convGeometry(a, x, wt, h, w)) return false;
  if (!oneDnnDepthwiseFits(h) || !oneDnnDepthwiseFits(w)) return false;
  if (g_direct_policy == DirectPolicy::kAuto && (h.in * w.in < kDirectMinPlane || x.numel() < kDirectMinInput))
    return false;

  at::Tensor& o = sizedOut(ctx, {x.size(0), a.groups, h.out, w.out}, x.options());
  const float* in = x.data_ptr<float>();
  const float* k = wt.data_ptr<float>();
  const float* b = bias ? bias->data_ptr<float>() : nullptr;
  float* out = o.data_ptr<float>();
  forPlanes(x.size(0) * a.groups, h.out * w.out,
            [&](int64_t begin, int64_t end) { depthwiseConv2dPlanes(in, k, b, out, begin, end, a.groups, h, w); });
  return true;
}

// --- large outputs: one sample at a time ------------------------------------------------

// oneDNN computes into a blocked copy of the output and reorders it into ATen's NCHW
// result, so a conv holds its output twice while it runs. For a large output (ResNet's
// stem at batch 8: 2 x 25.7 MB) that one step sets the whole slab. From this size on,
// with more than one sample, the kernel writes its planned output itself and convolves
// one sample at a time, so only one sample's result and blocked copy exist besides it:
// ResNet-18's slab at batch 8 drops from 51 to 39 MB (its lower bound from 51 to 32),
// for one copy of the output, which did not show in that model's time (127-130 ms per
// batch either way). Each output point is the same sum in the same order whatever the
// batch size, so the values are the batched call's (the tests compare with zero
// tolerance).
constexpr int64_t kPerSampleMinOutputBytes = int64_t{16} << 20;

bool perSampleConv(const ConvArgs& a, KernelContext& ctx) {
  const at::Tensor& x = ctx.tensor(0);
  if (a.transposed || x.dim() != 4 || x.size(0) < 2 || !isFloatContiguous(x)) return false;
  const at::Tensor& wt = ctx.tensor(1);
  ConvDim h, w;
  if (wt.dim() != 4 || !convGeometry(a, x, wt, h, w)) return false;
  const int64_t n = x.size(0), c = wt.size(0);
  if (n * c * h.out * w.out * int64_t{sizeof(float)} < kPerSampleMinOutputBytes) return false;
  at::Tensor& o = sizedOut(ctx, {n, c, h.out, w.out}, x.options());
  for (int64_t i = 0; i < n; ++i) {
    at::Tensor r = convolve(a, ctx, x.narrow(0, i, 1));
    // ATen gives a plain NCHW result for a contiguous NCHW input; anything else (a
    // future change of that rule) is copied just the same.
    o.narrow(0, i, 1).copy_(r);
  }
  return true;
}

bool readBias(KernelBuildContext& b, ConvArgs& a) {
  if (!isConst(b, 2)) return true;
  const c10::IValue& v = constant(b, 2);
  if (!v.isNone() && !v.isTensor()) return false;
  a.bias_const = true;
  a.bias = optionalTensor(v);
  return true;
}

// conv1d / conv2d(input, weight, bias?, stride, padding, dilation, groups) with `N`
// spatial dims and constant geometry. A batched input goes to _convolution as ATen's
// conv1d / conv2d do (through convolution, with the global flags); an unbatched one, or a
// tensor that is not dense CPU, to the op itself. The direct depthwise and per-sample
// paths only ever take 4-D inputs.
template <int N>
std::unique_ptr<Kernel> convNd(KernelBuildContext& b) {
  if (numInputs(b) != 7) return nullptr;
  auto stride = constInts(b, 3), padding = constInts(b, 4), dilation = constInts(b, 5);
  auto groups = constInt(b, 6);
  if (!stride || !padding || !dilation || !groups) return nullptr;  // e.g. padding="same"
  ConvArgs a;
  a.stride = expandInts(*stride, N);
  a.padding = expandInts(*padding, N);
  a.dilation = expandInts(*dilation, N);
  a.output_padding.assign(N, 0);
  a.groups = *groups;
  if (a.stride.size() != N || a.padding.size() != N || a.dilation.size() != N) return nullptr;
  if (!readBias(b, a)) return nullptr;
  const char* providers = convProviders(a);
  return makeKernel(
      providers,
      [a = std::move(a)](KernelContext& ctx) {
        const at::Tensor& x = ctx.tensor(0);
        if (x.dim() != N + 2 || !isDenseCpu(x) || x.is_complex()) {  // complex: ATen's own split
          c10::optional<at::Tensor> bias_rt;
          const c10::optional<at::Tensor>& bias = biasOf(a, ctx, bias_rt);
          const at::Tensor& w = ctx.tensor(1);
          ctx.output(0) = N == 1 ? at::conv1d(x, w, bias, a.stride, a.padding, a.dilation, a.groups)
                                 : at::conv2d(x, w, bias, a.stride, a.padding, a.dilation, a.groups);
          return;
        }
        if (!depthwiseDirect(a, ctx) && !perSampleConv(a, ctx)) runConv(a, ctx);
      },
      OutputContract::kCaptured);
}

// The kernel shared by convolution and _convolution (whose arguments are the same
// up to _convolution's backend flags): the direct depthwise path, one sample at a time
// for large outputs, else ATen's _convolution under an OutputCapture.
std::unique_ptr<Kernel> convKernel(KernelBuildContext& b, ConvArgs a) {
  if (!readBias(b, a)) return nullptr;
  const char* providers = convProviders(a);
  return makeKernel(
      providers,
      [a = std::move(a)](KernelContext& ctx) {
        if (!depthwiseDirect(a, ctx) && !perSampleConv(a, ctx)) runConv(a, ctx);
      },
      OutputContract::kCaptured);
}

// Reads convolution's arguments 3..8 (stride, padding, dilation, transposed,
// output_padding, groups), which _convolution shares; false when any is not a constant.
bool readConvArgs(KernelBuildContext& b, ConvArgs& a) {
  auto stride = constInts(b, 3), padding = constInts(b, 4), dilation = constInts(b, 5);
  auto transposed = constBool(b, 6);
  auto output_padding = constInts(b, 7);
  auto groups = constInt(b, 8);
  if (!stride || !padding || !dilation || !transposed || !output_padding || !groups) return false;
  a.stride = *stride;
  a.padding = *padding;
  a.dilation = *dilation;
  a.transposed = *transposed;
  a.output_padding = *output_padding;
  a.groups = *groups;
  return true;
}

// convolution(input, weight, bias?, stride, padding, dilation, transposed,
//             output_padding, groups): what conv2d/conv1d/conv_transpose* decompose to
// in core ATen IR. ATen's op calls _convolution with the global context's flags, as
// convolve() does when the flags are not explicit.
std::unique_ptr<Kernel> convolution(KernelBuildContext& b) {
  if (numInputs(b) != 9) return nullptr;
  ConvArgs a;
  if (!readConvArgs(b, a)) return nullptr;
  return convKernel(b, std::move(a));
}

std::unique_ptr<Kernel> convolutionUnderscore(KernelBuildContext& b) {
  if (numInputs(b) != 13) return nullptr;
  ConvArgs a;
  auto bench = constBool(b, 9), det = constBool(b, 10), cudnn = constBool(b, 11), tf32 = constBool(b, 12);
  if (!readConvArgs(b, a) || !bench || !det || !cudnn || !tf32) return nullptr;
  a.explicit_flags = true;
  a.benchmark = *bench;
  a.deterministic = *det;
  a.cudnn_enabled = *cudnn;
  a.allow_tf32 = *tf32;
  return convKernel(b, std::move(a));
}

}  // namespace

void registerConv(PluginRegistrar& r) {
  readDirectPolicy();
  r.outVariant("aten::conv1d", convNd<1>);
  r.outVariant("aten::conv2d", convNd<2>);
  r.outVariant("aten::_convolution", convolutionUnderscore);
  r.outVariant("aten::convolution", convolution);
}

}  // namespace brisk::ops_cpu::out
