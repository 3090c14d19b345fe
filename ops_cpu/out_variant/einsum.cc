// einsum: ATen's own contraction (at::native::einsum: permutes, then bmm / sum), whose
// result is placed in the memory plan's slab by an OutputCapture as conv's is
// (captured.h): ATen has no out form, and the contraction order it picks (and so the
// rounding) is kept exactly.
//
// For one operand and no reduction ("ij->ji", "ii->i") ATen returns a view of it, but
// the schema does not say the result aliases an input, so the memory plan would not
// keep the operand alive for it: such a result is copied (clone keeps a dense view's
// strides).
#include <ATen/ops/einsum_native.h>

#include "ops_cpu/out_variant/captured.h"

namespace brisk::ops_cpu::out {
namespace {

// einsum(str equation, Tensor[] tensors, *, int[]? path=None) with a constant equation
// and path.
std::unique_ptr<Kernel> einsum(KernelBuildContext& b) {
  if (numInputs(b) != 3 || !isConst(b, 0) || !constant(b, 0).isString()) return nullptr;
  std::optional<std::vector<int64_t>> path;
  if (!isConstNone(b, 2) && !(path = constInts(b, 2))) return nullptr;
  return makeKernel(
      "at::native::einsum",
      [eq = constant(b, 0).toStringRef(), path = std::move(path)](KernelContext& ctx) {
        c10::SmallVector<at::Tensor, 4> operands;
        for (const c10::IValue& t : ctx.input(1).toListRef()) operands.push_back(t.toTensor());
        const at::OptionalIntArrayRef p = path ? at::OptionalIntArrayRef(*path) : c10::nullopt;
        storeCaptured(ctx, [&] {
          at::Tensor r = at::native::einsum(eq, operands, p);
          for (const at::Tensor& t : operands)
            if (r.is_alias_of(t)) return r.clone();
          return r;
        });
      },
      OutputContract::kCaptured);
}

}  // namespace

void registerEinsum(PluginRegistrar& r) { r.outVariant("aten::einsum", einsum); }

}  // namespace brisk::ops_cpu::out
