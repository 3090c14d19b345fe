// Tensor ops of the zoo's model families (tools/zoo FAMILY_MODELS) no other kernel file
// serves:
//  * torch.tensor(number) (aten::tensor.int / .float / .bool): an out-variant kernel, so
//    the 0-dim result is a planned output filled each run instead of a new tensor;
//  * aten::copy_ (Swin's scripted `mask[h, w] = cnt` writes into a slice of the mask);
//  * aten::remainder.Scalar (torchvision's detection postprocessing `idx % classes`);
//  * from the core ATen IR: as_strided (Swin's decomposed window partition) and
//    index.Tensor (the decomposition of 1-d nearest upsampling gathers computed
//    positions).
#include <ATen/CPUFunctions.h>
#include <ATen/core/List.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/fill_native.h>

#include "ops_cpu/native/common.h"
#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/out_variant/operand.h"

namespace brisk::ops_cpu::native {
namespace {

// torch.tensor(number, dtype=None, device=None, requires_grad=False). The interpreter
// makes a 0-dim tensor of the number's natural dtype (int64; the default float dtype;
// bool) and casts it to `dtype` / `device`; filling a `dtype` tensor with the number as it
// is in the natural dtype gives the same value. dtype and device are read per run: a
// scripted `mask[a:b] = cnt` passes `mask`'s (prim::dtype / prim::device). A device other
// than the CPU takes the interpreter's path; requires_grad must be a constant false (the
// runtime runs without autograd).
enum class Number { kInt, kFloat, kBool };

std::unique_ptr<Kernel> tensorFromNumber(KernelBuildContext& b, Number kind) {
  if (out::numInputs(b) != 4 || out::constBool(b, 3) != std::optional<bool>(false)) return nullptr;
  const c10::ScalarType natural =
      kind == Number::kInt ? at::kLong : kind == Number::kBool ? at::kBool : out::defaultFloat();
  return out::makeKernel("0-dim fill (torch.tensor)", [kind, natural](KernelContext& ctx) {
    const c10::IValue& v = ctx.input(0);
    c10::Scalar value;
    if (kind == Number::kInt) {
      value = v.toInt();
    } else if (kind == Number::kBool) {
      value = v.toBool();
    } else {
      // Rounded to the natural dtype first, as the interpreter's intermediate tensor is.
      value = natural == at::kFloat ? static_cast<double>(static_cast<float>(v.toDouble())) : v.toDouble();
    }
    const c10::IValue& dtype = ctx.input(1);
    const c10::IValue& device = ctx.input(2);
    const c10::ScalarType dt = dtype.isNone() ? natural : dtype.toScalarType();
    if (!device.isNone() && !device.toDevice().is_cpu()) {
      ctx.output(0) = at::scalar_tensor(value, at::TensorOptions().dtype(natural)).to(device.toDevice(), dt);
      return;
    }
    at::Tensor& o = out::sizedOut(ctx, {}, at::TensorOptions().dtype(dt));
    at::native::fill_(o, value);
  });
}

// copy_(self, src, non_blocking): writes into `self` and returns it (the in-place
// contract; ops_cpu/out_variant/inplace.cc explains why such nodes reach a kernel).
std::unique_ptr<Kernel> copyInPlace(KernelBuildContext& b) {
  if (out::numInputs(b) != 3) return nullptr;
  return out::makeKernel(
      "at::native::copy_ (in place)",
      [](KernelContext& ctx) {
        at::Tensor self = ctx.tensor(0);
        const at::Tensor& src = ctx.tensor(1);
        const bool non_blocking = ctx.input(2).toBool();
        if (out::isDenseCpu(self) && out::isDenseCpu(src))
          at::native::copy_(self, src, non_blocking);
        else
          self.copy_(src, non_blocking);
        ctx.output(0) = ctx.input(0);
      },
      OutputContract::kFresh, KernelKind::kNative);  // the output is `self`, the caller's tensor
}

// remainder(self, Scalar): ATen's Scalar overload wraps the number and runs the Tensor
// one (same promotion); the result goes into the planned output.
std::unique_ptr<Kernel> remainderScalar(KernelBuildContext& b) {
  if (out::numInputs(b) != 2) return nullptr;
  out::Operand other = out::scalarOperand(b, 1);
  return out::makeKernel("at::cpu::remainder_out(Scalar)", [other = std::move(other)](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    c10::MaybeOwned<at::Tensor> y = other.get(ctx);
    if (!out::isDenseCpu(x)) {
      ctx.output(0) = at::remainder(x, *y);
      return;
    }
    out::writeOut(
        ctx, at::native::result_type(x, *y), [&](at::Tensor& o) { at::cpu::remainder_out(o, x, *y); },
        [&] { return at::cpu::remainder(x, *y); });
  });
}

// as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset):
// a view of self's storage; constant sizes / strides are read once at load.
std::unique_ptr<Kernel> asStrided(KernelBuildContext& b) {
  const Node& n = b.node();
  if (n.inputs().size() != 4) return nullptr;
  return lambda(
      [size = IntListArg(n, 1), stride = IntListArg(n, 2)](KernelContext& ctx) {
        const at::Tensor& t = ctx.tensor(0);
        IntVec sbuf, tbuf;
        const c10::IntArrayRef sz = size.get(ctx, sbuf), st = stride.get(ctx, tbuf);
        const std::optional<int64_t> offset = optInt(ctx.input(3));
        ctx.output(0) = plainCpu(t) ? at::native::as_strided_tensorimpl(t, sz, st, offset)
                                    : t.as_strided(sz, st, offset);
      },
      "at::native::as_strided_tensorimpl");
}

// index.Tensor(Tensor self, Tensor?[] indices): advanced indexing into the planned
// output (at::cpu::index_out resizes it); the result has self's dtype.
std::unique_ptr<Kernel> indexTensor(KernelBuildContext& b) {
  if (out::numInputs(b) != 2) return nullptr;
  return out::makeKernel("at::cpu::index_out", [](KernelContext& ctx) {
    const at::Tensor& self = ctx.tensor(0);
    const c10::List<std::optional<at::Tensor>> indices = ctx.input(1).toOptionalTensorList();
    if (!out::isDenseCpu(self)) {
      ctx.output(0) = at::index(self, indices);
      return;
    }
    out::writeOut(
        ctx, self.scalar_type(), [&](at::Tensor& o) { at::cpu::index_out(o, self, indices); },
        [&] { return at::cpu::index(self, indices); });
  });
}

}  // namespace

void registerFamilyTensorKernels(PluginRegistrar& r) {
  r.outVariant("aten::tensor.int", [](KernelBuildContext& b) { return tensorFromNumber(b, Number::kInt); });
  r.outVariant("aten::tensor.float", [](KernelBuildContext& b) { return tensorFromNumber(b, Number::kFloat); });
  r.outVariant("aten::tensor.bool", [](KernelBuildContext& b) { return tensorFromNumber(b, Number::kBool); });
  r.native("aten::copy_", copyInPlace);
  r.outVariant("aten::remainder.Scalar", remainderScalar);
  r.native("aten::as_strided", asStrided);
  r.outVariant("aten::index.Tensor", indexTensor);
}

}  // namespace brisk::ops_cpu::native
