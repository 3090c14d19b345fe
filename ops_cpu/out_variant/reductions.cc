// Reductions: sum, sum.dim_IntList, mean, mean.dim (at::cpu::sum_out / mean_out), all
// (at::cpu::all_out).
#include <ATen/CPUFunctions.h>

#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {
namespace {

struct ReduceArgs {
  bool all = true;  // dim=None (or the no-dim overload)
  std::vector<int64_t> dims;
  bool keepdim = false;
  c10::optional<at::ScalarType> dtype;
};

// Output dtype: the explicit dtype, else sum promotes integers/bools to int64.
template <bool kMean>
c10::ScalarType reduceDtype(const ReduceArgs& a, const at::Tensor& x) {
  if (a.dtype) return *a.dtype;
  if (!kMean && c10::isIntegralType(x.scalar_type(), /*includeBool=*/true)) return at::kLong;
  return x.scalar_type();
}

bool readDtype(KernelBuildContext& b, size_t i, ReduceArgs& a) {
  if (!isConst(b, i)) return false;
  const c10::IValue& v = constant(b, i);
  if (v.isNone()) return true;
  if (!v.isInt()) return false;
  a.dtype = static_cast<at::ScalarType>(v.toInt());
  return true;
}

template <bool kMean>
std::unique_ptr<Kernel> reduceKernel(ReduceArgs a) {
  return makeKernel(kMean ? "at::cpu::mean_out" : "at::cpu::sum_out", [a = std::move(a)](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    at::OptionalIntArrayRef dims = a.all ? at::OptionalIntArrayRef() : at::OptionalIntArrayRef(a.dims);
    // mean of integers is an error in ATen: let the functional op raise it.
    if (!isDenseCpu(x) || (kMean && !a.dtype && !c10::isFloatingType(x.scalar_type()) &&
                           !c10::isComplexType(x.scalar_type()))) {
      ctx.output(0) = kMean ? at::mean(x, dims, a.keepdim, a.dtype) : at::sum(x, dims, a.keepdim, a.dtype);
      return;
    }
    writeOut(
        ctx, reduceDtype<kMean>(a, x),
        [&](at::Tensor& o) {
          if (kMean)
            at::cpu::mean_out(o, x, dims, a.keepdim, a.dtype);
          else
            at::cpu::sum_out(o, x, dims, a.keepdim, a.dtype);
        },
        [&] { return kMean ? at::cpu::mean(x, dims, a.keepdim, a.dtype) : at::cpu::sum(x, dims, a.keepdim, a.dtype); });
  });
}

// sum(Tensor self, *, ScalarType? dtype) / mean(Tensor self, *, ScalarType? dtype)
template <bool kMean>
std::unique_ptr<Kernel> reduceAll(KernelBuildContext& b) {
  if (numInputs(b) != 2) return nullptr;
  ReduceArgs a;
  if (!readDtype(b, 1, a)) return nullptr;
  return reduceKernel<kMean>(std::move(a));
}

// sum.dim_IntList / mean.dim(Tensor self, int[1]? dim, bool keepdim, *, ScalarType? dtype)
template <bool kMean>
std::unique_ptr<Kernel> reduceDims(KernelBuildContext& b) {
  if (numInputs(b) != 4 || !isConst(b, 1)) return nullptr;
  ReduceArgs a;
  const c10::IValue& d = constant(b, 1);
  if (d.isNone()) {
    a.all = true;
  } else if (d.isIntList()) {
    a.all = false;
    a.dims = d.toIntVector();
  } else {
    return nullptr;
  }
  auto keep = constBool(b, 2);
  if (!keep || !readDtype(b, 3, a)) return nullptr;
  a.keepdim = *keep;
  return reduceKernel<kMean>(std::move(a));
}

// Result dtype of all / any: bool, uint8 for uint8 inputs (ATen's functional ops).
c10::ScalarType boolReduceDtype(const at::Tensor& x) { return x.scalar_type() == at::kByte ? at::kByte : at::kBool; }

// all(Tensor self).
std::unique_ptr<Kernel> allKernel(KernelBuildContext& b) {
  if (numInputs(b) != 1) return nullptr;
  return makeKernel("at::cpu::all_out", [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x)) {
      ctx.output(0) = at::all(x);
      return;
    }
    writeOut(
        ctx, boolReduceDtype(x), [&](at::Tensor& o) { at::cpu::all_out(o, x); }, [&] { return at::cpu::all(x); });
  });
}

// any.dim(Tensor self, int dim, bool keepdim) (core ATen IR).
std::unique_ptr<Kernel> anyDim(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  auto dim = constInt(b, 1);
  auto keep = constBool(b, 2);
  if (!dim || !keep) return nullptr;
  const int64_t d = *dim;
  const bool k = *keep;
  return makeKernel("at::cpu::any_out(dim)", [d, k](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x)) {
      ctx.output(0) = at::any(x, d, k);
      return;
    }
    writeOut(
        ctx, boolReduceDtype(x), [&](at::Tensor& o) { at::cpu::any_out(o, x, d, k); },
        [&] { return at::cpu::any(x, d, k); });
  });
}

}  // namespace

void registerReductions(PluginRegistrar& r) {
  r.outVariant("aten::all", allKernel);
  r.outVariant("aten::any.dim", anyDim);
  r.outVariant("aten::sum", reduceAll<false>);
  r.outVariant("aten::sum.dim_IntList", reduceDims<false>);
  r.outVariant("aten::mean", reduceAll<true>);
  r.outVariant("aten::mean.dim", reduceDims<true>);
}

}  // namespace brisk::ops_cpu::out
