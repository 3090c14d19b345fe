// new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype, Layout? layout,
// Device? device, bool? pin_memory): a contiguous zero tensor whose unspecified options
// are self's. The (retained, plannable) output is resized and zeroed in place on every
// run; sizes and options may be run-time values.
#include <ATen/ATen.h>
#include <ATen/ops/zero_native.h>

#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {
namespace {

std::unique_ptr<Kernel> newZeros(KernelBuildContext& b) {
  if (numInputs(b) != 6) return nullptr;
  return makeKernel("at::native::zero_ (new_zeros)", [](KernelContext& ctx) {
    const at::Tensor& self = ctx.tensor(0);
    const at::DimVector size = ctx.input(1).toDimVector();
    const c10::IValue &dtype = ctx.input(2), &layout = ctx.input(3), &device = ctx.input(4), &pin = ctx.input(5);
    // Options left to self are self's: a plain CPU result needs a dense CPU self unless
    // the layout and device are both given.
    const bool strided = layout.isNone() ? isDenseCpu(self) : layout.toLayout() == c10::kStrided;
    const bool cpu = device.isNone() ? isDenseCpu(self) : device.toDevice().is_cpu();
    if (!strided || !cpu || (!pin.isNone() && pin.toBool())) {
      ctx.output(0) = self.new_zeros(size, dtype.toOptional<c10::ScalarType>(), layout.toOptional<c10::Layout>(),
                                     device.toOptional<c10::Device>(), pin.toOptional<bool>());
      return;
    }
    const c10::ScalarType dt = dtype.isNone() ? self.scalar_type() : dtype.toScalarType();
    at::native::zero_(sizedOut(ctx, size, at::TensorOptions().dtype(dt)));
  });
}

}  // namespace

void registerNewZeros(PluginRegistrar& r) { r.outVariant("aten::new_zeros", newZeros); }

}  // namespace brisk::ops_cpu::out
