// Convolution: conv2d / _convolution.
//
// libtorch exposes no real out form (mkldnn_convolution's ".out" is a copy of the
// functional result, and oneDNN/ideep headers are not shipped; libtorch_cpu exports no
// dnnl_* symbols, and a second oneDNN from Debian's libdnnl in the process is risky), so
// the kernel calls at::native::_convolution directly (skipping the conv2d ->
// convolution -> _convolution dispatcher hops and autograd wrappers) and stores its
// fresh result. With memory planning the kernel has kind kOutVariant, so its output is
// retained and managed, and the call runs inside an OutputCapture
// (core/output_capture.h): the allocation that becomes the result is served at the
// output's planned slab offset, so conv outputs live in the slab with no copy and the
// same values as the interpreter's (same kernel, same arguments). Without planning it
// has kind kNative (a retained output would only hold memory between runs).
#include <ATen/Context.h>
#include <ATen/ops/_convolution_native.h>
#include <ATen/ops/conv2d.h>

#include "core/options.h"
#include "core/output_capture.h"
#include "ops_cpu/out/common.h"

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

at::Tensor runConvUncaptured(const ConvArgs& a, KernelContext& ctx) {
  const at::Tensor& x = ctx.tensor(0);
  const at::Tensor& w = ctx.tensor(1);
  c10::optional<at::Tensor> bias_rt;
  const c10::optional<at::Tensor>& bias = a.bias_const ? a.bias : (bias_rt = optionalTensor(ctx.input(2)));
  if (a.explicit_flags)
    return at::native::_convolution(x, w, bias, a.stride, a.padding, a.dilation, a.transposed, a.output_padding,
                                    a.groups, a.benchmark, a.deterministic, a.cudnn_enabled, a.allow_tf32);
  auto& g = at::globalContext();
  return at::native::_convolution(x, w, bias, a.stride, a.padding, a.dilation, a.transposed, a.output_padding,
                                  a.groups, g.benchmarkCuDNN(), g.deterministicCuDNN() || g.deterministicAlgorithms(),
                                  g.userEnabledCuDNN(), g.allowTF32CuDNN());
}

// Serves the result from the memory plan when the output is managed (see the top).
at::Tensor runConv(const ConvArgs& a, KernelContext& ctx) {
  OutputCapture capture(ctx, 0);
  at::Tensor r = runConvUncaptured(a, ctx);
  capture.done(r);
  return r;
}

// kOutVariant (retained, managed) only when the memory plan can place the output.
KernelKind convKind(KernelBuildContext& b) {
  return b.options().memory_planning ? KernelKind::kOutVariant : KernelKind::kNative;
}

bool readBias(KernelBuildContext& b, ConvArgs& a) {
  if (!isConst(b, 2)) return true;
  const c10::IValue& v = constant(b, 2);
  if (!v.isNone() && !v.isTensor()) return false;
  a.bias_const = true;
  a.bias = optionalTensor(v);
  return true;
}

std::unique_ptr<Kernel> conv2d(KernelBuildContext& b) {
  if (numInputs(b) != 7) return nullptr;
  auto stride = constInts(b, 3), padding = constInts(b, 4), dilation = constInts(b, 5);
  auto groups = constInt(b, 6);
  if (!stride || !padding || !dilation || !groups) return nullptr;  // e.g. padding="same"
  ConvArgs a;
  a.stride = expandInts(*stride, 2);
  a.padding = expandInts(*padding, 2);
  a.dilation = expandInts(*dilation, 2);
  a.output_padding = {0, 0};
  a.groups = *groups;
  if (a.stride.size() != 2 || a.padding.size() != 2 || a.dilation.size() != 2) return nullptr;
  if (!readBias(b, a)) return nullptr;
  return makeKernel("at::native::_convolution", [a = std::move(a)](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (x.dim() != 4 || !isDenseCpu(x)) {  // unbatched (3-D) inputs: conv2d's own handling
      c10::optional<at::Tensor> bias_rt;
      const c10::optional<at::Tensor>& bias = a.bias_const ? a.bias : (bias_rt = optionalTensor(ctx.input(2)));
      ctx.output(0) = at::conv2d(x, ctx.tensor(1), bias, a.stride, a.padding, a.dilation, a.groups);
      return;
    }
    ctx.output(0) = runConv(a, ctx);
  }, convKind(b));
}

std::unique_ptr<Kernel> convolutionUnderscore(KernelBuildContext& b) {
  if (numInputs(b) != 13) return nullptr;
  auto stride = constInts(b, 3), padding = constInts(b, 4), dilation = constInts(b, 5);
  auto transposed = constBool(b, 6);
  auto output_padding = constInts(b, 7);
  auto groups = constInt(b, 8);
  auto bench = constBool(b, 9), det = constBool(b, 10), cudnn = constBool(b, 11), tf32 = constBool(b, 12);
  if (!stride || !padding || !dilation || !transposed || !output_padding || !groups || !bench || !det || !cudnn ||
      !tf32)
    return nullptr;
  ConvArgs a;
  a.stride = *stride;
  a.padding = *padding;
  a.dilation = *dilation;
  a.transposed = *transposed;
  a.output_padding = *output_padding;
  a.groups = *groups;
  a.explicit_flags = true;
  a.benchmark = *bench;
  a.deterministic = *det;
  a.cudnn_enabled = *cudnn;
  a.allow_tf32 = *tf32;
  if (!readBias(b, a)) return nullptr;
  return makeKernel(
      "at::native::_convolution", [a = std::move(a)](KernelContext& ctx) { ctx.output(0) = runConv(a, ctx); },
      convKind(b));
}

}  // namespace

void registerConv(PluginRegistrar& r) {
  r.outVariant("aten::conv2d", conv2d);
  r.outVariant("aten::_convolution", convolutionUnderscore);
}

}  // namespace brisk::ops_cpu::out
