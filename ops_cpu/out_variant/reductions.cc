// Reductions: sum, sum.dim_IntList, mean, mean.dim (at::cpu::sum_out / mean_out), all
// (at::cpu::all_out), any.dim, amax, max.dim (values and indices), prod.dim_int, std /
// std.dim / std.correction.
#include <ATen/CPUFunctions.h>
#include <ATen/ops/std_native.h>

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

// amax(Tensor self, int[1] dim=[], bool keepdim=False); any dtype (bool too).
std::unique_ptr<Kernel> amax(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  auto dims = constInts(b, 1);
  auto keep = constBool(b, 2);
  if (!dims || !keep) return nullptr;
  return makeKernel("at::cpu::amax_out", [d = *dims, k = *keep](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (!isDenseCpu(x)) {
      ctx.output(0) = at::amax(x, d, k);
      return;
    }
    writeOut(
        ctx, x.scalar_type(), [&](at::Tensor& o) { at::cpu::amax_out(o, x, d, k); },
        [&] { return at::cpu::amax(x, d, k); });
  });
}

// max.dim(Tensor self, int dim, bool keepdim=False) -> (values, indices): both
// outputs are written in place when both slots hold reusable tensors.
std::unique_ptr<Kernel> maxDim(KernelBuildContext& b) {
  if (numInputs(b) != 3 || nodeOf(b).outputs().size() != 2) return nullptr;
  auto dim = constInt(b, 1);
  auto keep = constBool(b, 2);
  if (!dim || !keep) return nullptr;
  return makeKernel("at::cpu::max_out(dim)", [d = *dim, k = *keep](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    if (isDenseCpu(x)) {
      at::Tensor* values = reusableOut(ctx, 0, x.scalar_type());
      at::Tensor* indices = reusableOut(ctx, 1, at::kLong);
      if (values && indices) {
        at::cpu::max_out(*values, *indices, x, d, k);
        return;
      }
    }
    auto [values, indices] = isDenseCpu(x) ? at::cpu::max(x, d, k) : at::max(x, d, k);
    ctx.output(0) = std::move(values);
    ctx.output(1) = std::move(indices);
  });
}

// prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None):
// integers and bools multiply into int64 unless a dtype is given, as for sum.
std::unique_ptr<Kernel> prodDim(KernelBuildContext& b) {
  if (numInputs(b) != 4) return nullptr;
  auto dim = constInt(b, 1);
  auto keep = constBool(b, 2);
  ReduceArgs a;
  if (!dim || !keep || !readDtype(b, 3, a)) return nullptr;
  a.all = false;
  a.dims = {*dim};
  a.keepdim = *keep;
  return makeKernel("at::cpu::prod_out", [a = std::move(a)](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    const int64_t d = a.dims[0];
    if (!isDenseCpu(x)) {
      ctx.output(0) = at::prod(x, d, a.keepdim, a.dtype);
      return;
    }
    writeOut(
        ctx, reduceDtype<false>(a, x), [&](at::Tensor& o) { at::cpu::prod_out(o, x, d, a.keepdim, a.dtype); },
        [&] { return at::cpu::prod(x, d, a.keepdim, a.dtype); });
  });
}

// std over `dims` (all when dim is None) with Bessel's `correction`, through ATen's
// std_out (not structured: at::native's CPU implementation). Floating inputs only;
// complex ones (real result) and integers (ATen's error) take the functional op.
struct StdArgs {
  bool all = true;
  std::vector<int64_t> dims;
  std::optional<c10::Scalar> correction;
  bool keepdim = false;
};

std::unique_ptr<Kernel> stdKernel(StdArgs a) {
  return makeKernel("at::native::std_out", [a = std::move(a)](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    at::OptionalIntArrayRef dims = a.all ? at::OptionalIntArrayRef() : at::OptionalIntArrayRef(a.dims);
    if (!isDenseCpu(x) || !c10::isFloatingType(x.scalar_type())) {
      ctx.output(0) = at::std(x, dims, a.correction, a.keepdim);
      return;
    }
    writeOut(
        ctx, x.scalar_type(), [&](at::Tensor& o) { at::native::std_out(x, dims, a.correction, a.keepdim, o); },
        [&] { return at::native::std(x, dims, a.correction, a.keepdim); });
  });
}

// A constant int[1]? dim argument: None (all dims) or a list.
bool readStdDims(KernelBuildContext& b, size_t i, StdArgs& a) {
  if (!isConst(b, i)) return false;
  const c10::IValue& d = constant(b, i);
  if (d.isNone()) return true;
  if (!d.isIntList()) return false;
  a.all = false;
  a.dims = d.toIntVector();
  return true;
}

// std(Tensor self, bool unbiased=True) and std.dim(Tensor self, int[1]? dim, bool
// unbiased=True, bool keepdim=False): unbiased is correction 1, else 0.
std::unique_ptr<Kernel> stdUnbiased(KernelBuildContext& b) {
  const size_t n = numInputs(b);
  if (n != 2 && n != 4) return nullptr;
  StdArgs a;
  auto unbiased = constBool(b, n == 2 ? 1 : 2);
  if (!unbiased) return nullptr;
  a.correction = c10::Scalar(int64_t{*unbiased ? 1 : 0});
  if (n == 4) {
    auto keep = constBool(b, 3);
    if (!keep || !readStdDims(b, 1, a)) return nullptr;
    a.keepdim = *keep;
  }
  return stdKernel(std::move(a));
}

// std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool
// keepdim=False) (torch.export's spelling).
std::unique_ptr<Kernel> stdCorrection(KernelBuildContext& b) {
  if (numInputs(b) != 4 || !isConst(b, 2)) return nullptr;
  StdArgs a;
  auto keep = constBool(b, 3);
  if (!keep || !readStdDims(b, 1, a)) return nullptr;
  const c10::IValue& c = constant(b, 2);
  if (c.isScalar())
    a.correction = c.toScalar();
  else if (!c.isNone())
    return nullptr;
  a.keepdim = *keep;
  return stdKernel(std::move(a));
}

}  // namespace

void registerReductions(PluginRegistrar& r) {
  r.outVariant("aten::all", allKernel);
  r.outVariant("aten::any.dim", anyDim);
  r.outVariant("aten::sum", reduceAll<false>);
  r.outVariant("aten::sum.dim_IntList", reduceDims<false>);
  r.outVariant("aten::mean", reduceAll<true>);
  r.outVariant("aten::mean.dim", reduceDims<true>);
  r.outVariant("aten::amax", amax);
  r.outVariant("aten::max.dim", maxDim);
  r.outVariant("aten::prod.dim_int", prodDim);
  r.outVariant("aten::std", stdUnbiased);
  r.outVariant("aten::std.dim", stdUnbiased);
  r.outVariant("aten::std.correction", stdCorrection);
}

}  // namespace brisk::ops_cpu::out
