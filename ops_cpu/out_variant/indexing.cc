// Index-driven copies: gather, index_select, index_add, topk (values and indices) and
// roll, written into the retained (plannable) outputs.
//
// gather / index_select / index_add / topk call ATen's CPU out kernels (the functional
// op's own kernel, so the same bits); roll has no real out form in libtorch (roll.out
// copies the functional result), so it is done here as block copies.
#include <ATen/CPUFunctions.h>
#include <ATen/ops/resize_native.h>
#include <c10/core/WrapDimMinimal.h>

#include "ops_cpu/native/common.h"
#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {
namespace {

// gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False)
std::unique_ptr<Kernel> gather(KernelBuildContext& b) {
  if (numInputs(b) != 4) return nullptr;
  return makeKernel("at::cpu::gather_out", [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    const at::Tensor& index = ctx.tensor(2);
    const int64_t dim = ctx.input(1).toInt();
    const bool sparse = ctx.input(3).toBool();
    if (!isDenseCpu(x) || !isDenseCpu(index)) {
      ctx.output(0) = at::gather(x, dim, index, sparse);
      return;
    }
    writeOut(
        ctx, x.scalar_type(), [&](at::Tensor& o) { at::cpu::gather_out(o, x, dim, index, sparse); },
        [&] { return at::cpu::gather(x, dim, index, sparse); });
  });
}

// index_select(Tensor self, int dim, Tensor index)
std::unique_ptr<Kernel> indexSelect(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  return makeKernel("at::cpu::index_select_out", [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    const at::Tensor& index = ctx.tensor(2);
    const int64_t dim = ctx.input(1).toInt();
    if (!isDenseCpu(x) || !isDenseCpu(index)) {
      ctx.output(0) = at::index_select(x, dim, index);
      return;
    }
    writeOut(
        ctx, x.scalar_type(), [&](at::Tensor& o) { at::cpu::index_select_out(o, x, dim, index); },
        [&] { return at::cpu::index_select(x, dim, index); });
  });
}

// index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1): the
// out kernel copies self into the output, then accumulates source's slices.
std::unique_ptr<Kernel> indexAdd(KernelBuildContext& b) {
  if (numInputs(b) != 5) return nullptr;
  const ScalarArg alpha = scalarArg(b, 4);
  return makeKernel("at::cpu::index_add_out", [alpha](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    const at::Tensor& index = ctx.tensor(2);
    const at::Tensor& source = ctx.tensor(3);
    const int64_t dim = ctx.input(1).toInt();
    const c10::Scalar a = alpha.get(ctx);
    if (!isDenseCpu(x) || !isDenseCpu(index) || !isDenseCpu(source)) {
      ctx.output(0) = at::index_add(x, dim, index, source, a);
      return;
    }
    writeOut(
        ctx, x.scalar_type(), [&](at::Tensor& o) { at::cpu::index_add_out(o, x, dim, index, source, a); },
        [&] { return at::cpu::index_add(x, dim, index, source, a); });
  });
}

// topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True)
//   -> (Tensor values, Tensor indices)
std::unique_ptr<Kernel> topk(KernelBuildContext& b) {
  if (numInputs(b) != 5 || nodeOf(b).outputs().size() != 2) return nullptr;
  return makeKernel("at::cpu::topk_out", [](KernelContext& ctx) {
    const at::Tensor& x = ctx.tensor(0);
    const int64_t k = ctx.input(1).toInt(), dim = ctx.input(2).toInt();
    const bool largest = ctx.input(3).toBool(), sorted = ctx.input(4).toBool();
    if (isDenseCpu(x)) {
      at::Tensor* values = reusableOut(ctx, 0, x.scalar_type());
      at::Tensor* indices = values ? reusableOut(ctx, 1, at::kLong) : nullptr;
      if (indices) {
        at::cpu::topk_out(*values, *indices, x, k, dim, largest, sorted);
        return;
      }
    }
    auto [v, i] = isDenseCpu(x) ? at::cpu::topk(x, k, dim, largest, sorted) : at::topk(x, k, dim, largest, sorted);
    ctx.output(0) = std::move(v);
    ctx.output(1) = std::move(i);
  });
}

// --- roll ----------------------------------------------------------------------------

constexpr size_t kMaxRollDims = 8;

// Copies `x` rolled by shift[d] along each dim d (shift[d] in [0, size(d))) into `o`
// (same sizes): each rolled dim splits into a head [0, n - s) landing at s and a tail
// [n - s, n) landing at 0, so the result is the 2^k blocks of those splits, each one
// strided copy (TensorIterator: any strides, vectorized, parallel).
void rollBlocks(const at::Tensor& x, at::Tensor& o, const c10::SmallVector<int64_t, kMaxRollDims>& dims,
                const c10::SmallVector<int64_t, kMaxRollDims>& shifts) {
  const size_t k = dims.size();
  for (uint32_t mask = 0; mask < (1u << k); ++mask) {
    at::Tensor src = x, dst = o;
    bool empty = false;
    for (size_t j = 0; j < k && !empty; ++j) {
      const int64_t d = dims[j], n = x.size(d), s = shifts[j];
      const bool tail = mask & (1u << j);
      const int64_t len = tail ? s : n - s;
      empty = len == 0;
      if (empty) break;
      src = src.narrow(d, tail ? n - s : 0, len);
      dst = dst.narrow(d, tail ? 0 : s, len);
    }
    if (!empty) dst.copy_(src);
  }
}

// roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) with constant dims; the shifts
// may be computed at run time (Swin's windows shift by -shift_size, scripted as a list
// built per run). ATen's result is a fresh contiguous tensor; so is this one. dims=[]
// (roll of the flattened tensor) is served for contiguous inputs, where the flat view
// is free. Mismatched lists, 0-d inputs and bad dims go to ATen, which raises its own
// error.
std::unique_ptr<Kernel> roll(KernelBuildContext& b) {
  if (numInputs(b) != 3) return nullptr;
  auto dims = constInts(b, 2);
  if (!dims || dims->size() > kMaxRollDims) return nullptr;
  native::IntListArg shifts_arg(b.node(), 1);
  return makeKernel("brisk block-copy roll", [shifts_arg, dims = *dims](KernelContext& ctx) {
    native::IntVec buf;
    const c10::IntArrayRef shifts = shifts_arg.get(ctx, buf);
    const at::Tensor& x = ctx.tensor(0);
    const bool flat = dims.empty();
    if (!isDenseCpu(x) || x.dim() == 0 || (flat && !x.is_contiguous()) ||
        shifts.size() != (flat ? 1 : dims.size())) {
      ctx.output(0) = at::roll(x, shifts, dims);
      return;
    }
    at::Tensor& o = sizedOut(ctx, x.sizes(), x.options());
    if (x.numel() == 0) return;
    const at::Tensor src = flat ? x.view({-1}) : x;
    at::Tensor dst = flat ? o.view({-1}) : o;
    // A dim named twice rolls by the sum of its shifts (ATen rolls once per entry).
    c10::SmallVector<int64_t, kMaxRollDims> ds, ss;
    for (size_t j = 0; j < shifts.size(); ++j) {
      const int64_t d = flat ? 0 : c10::maybe_wrap_dim(dims[j], src.dim());
      const int64_t n = src.size(d);
      const int64_t s = ((shifts[j] % n) + n) % n;
      auto it = std::find(ds.begin(), ds.end(), d);
      if (it == ds.end()) {
        ds.push_back(d);
        ss.push_back(s);
      } else {
        int64_t& t = ss[it - ds.begin()];
        t = (t + s) % n;
      }
    }
    rollBlocks(src, dst, ds, ss);
  });
}

}  // namespace

void registerIndexing(PluginRegistrar& r) {
  r.outVariant("aten::gather", gather);
  r.outVariant("aten::index_select", indexSelect);
  r.outVariant("aten::index_add", indexAdd);
  r.outVariant("aten::topk", topk);
  r.outVariant("aten::roll", roll);
}

}  // namespace brisk::ops_cpu::out
