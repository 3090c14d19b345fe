// embedding_bag (both TorchScript schemas, ".padding_idx" too) and _embedding_bag (what
// the core ATen IR lowers nn.EmbeddingBag to): the bags are reduced straight into the
// reused output 0 for float / double weights, modes sum, mean and max, with or without
// per_sample_weights (sum only, as in ATen).
//
// Same arithmetic as ATen's CPU kernel (EmbeddingBag.cpp), so results match it:
//  * sum / mean: each bag starts at 0 and adds its rows in index order (ATen's
//    index_select_add, fbgemm's SpMDM kernel for float: also one row after the other);
//    with per_sample_weights each step is one fused multiply-add, as fbgemm's is;
//    mean divides by max(count, 1);
//  * max: the first row of a bag, then each element replaced when a later row's is
//    greater (`>`, so a NaN never replaces and is never replaced), empty bags 0;
//  * padding_idx entries are skipped and not counted (ATen decrements bag_size).
// Only output 0 is produced: the factory declines nodes whose offset2bag / bag_size /
// max_indices outputs are used. Anything else (other dtypes, 2-D indices, malformed
// offsets, out-of-range indices, per_sample_weights outside mode sum) runs ATen's op,
// which computes or reports errors exactly as the interpreter does.
#include <ATen/ops/_embedding_bag.h>
#include <ATen/ops/_embedding_bag_forward_only.h>
#include <ATen/ops/embedding_bag.h>
#include <ATen/ops/resize_native.h>
#include <c10/core/WrapDimMinimal.h>

#include <cmath>

#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {
namespace {

constexpr int64_t kModeSum = 0;
constexpr int64_t kModeMean = 1;
constexpr int64_t kModeMax = 2;

// True when `off` (num_offsets entries) partitions n indices: starts at 0, never
// decreases, stays within n, and with include_last_offset ends exactly at n.
template <typename index_t>
bool validOffsets(const index_t* off, int64_t num_offsets, int64_t n, bool include_last_offset) {
  if (num_offsets == 0) return !include_last_offset;
  if (off[0] != 0) return false;
  for (int64_t i = 1; i < num_offsets; ++i)
    if (off[i] < off[i - 1]) return false;
  return include_last_offset ? off[num_offsets - 1] == n : off[num_offsets - 1] <= n;
}

// One bag: rows idx[start, end) of w (dim values each) into dst. The mode and whether
// there are per-sample weights are template arguments: the row loop has no branch but
// the padding test (deepandwide-sized bags are a few rows of 16 floats).
template <int64_t kMode, bool kWeighted, typename scalar_t, typename index_t>
void reduceBag(const scalar_t* w, int64_t dim, const index_t* idx, const scalar_t* psw, int64_t start, int64_t end,
               int64_t padding_idx, scalar_t* dst) {
  std::fill(dst, dst + dim, scalar_t(0));
  int64_t count = 0;
  for (int64_t i = start; i < end; ++i) {
    const int64_t r = idx[i];
    if (r == padding_idx) continue;
    const scalar_t* src = w + r * dim;
    if (kMode == kModeMax) {
      if (count == 0) {
        std::copy(src, src + dim, dst);
      } else {
        for (int64_t d = 0; d < dim; ++d)
          if (src[d] > dst[d]) dst[d] = src[d];
      }
    } else if (kWeighted) {
      const scalar_t s = psw[i];
      for (int64_t d = 0; d < dim; ++d) dst[d] = std::fma(s, src[d], dst[d]);
    } else {
      for (int64_t d = 0; d < dim; ++d) dst[d] += src[d];
    }
    ++count;
  }
  if (kMode == kModeMean) {
    const scalar_t div = static_cast<scalar_t>(std::max<int64_t>(count, 1));
    for (int64_t d = 0; d < dim; ++d) dst[d] /= div;
  }
}

template <int64_t kMode, bool kWeighted, typename scalar_t, typename index_t>
void reduceAll(const scalar_t* w, int64_t dim, const index_t* idx, const index_t* off, const scalar_t* psw,
               int64_t num_bags, int64_t num_offsets, int64_t n, int64_t padding_idx, scalar_t* o) {
  for (int64_t bag = 0; bag < num_bags; ++bag) {
    const int64_t end = (bag + 1 < num_offsets) ? static_cast<int64_t>(off[bag + 1]) : n;
    reduceBag<kMode, kWeighted>(w, dim, idx, psw, static_cast<int64_t>(off[bag]), end, padding_idx, o + bag * dim);
  }
}

// Reduces every bag into `out` ([num_bags, dim], contiguous, resized here). Returns
// false, writing nothing, when the offsets or indices are not valid (the caller then
// runs ATen, which raises its own error or handles it its own way).
template <typename scalar_t, typename index_t>
bool reduceBags(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets, const at::Tensor& psw,
                int64_t mode, bool include_last_offset, int64_t padding_idx, at::Tensor& out) {
  const int64_t n = indices.numel();
  const int64_t num_offsets = offsets.numel();
  const int64_t num_bags = include_last_offset ? num_offsets - 1 : num_offsets;
  const index_t* off = offsets.data_ptr<index_t>();
  const index_t* idx = indices.data_ptr<index_t>();
  if (!validOffsets(off, num_offsets, n, include_last_offset)) return false;
  const int64_t rows = weight.size(0);
  const int64_t dim = weight.size(1);
  for (int64_t i = 0; i < n; ++i)
    if (idx[i] < 0 || idx[i] >= rows) return false;
  at::native::resize_(out, {num_bags, dim}, c10::nullopt);
  const scalar_t* w = weight.data_ptr<scalar_t>();
  const scalar_t* ps = psw.defined() ? psw.data_ptr<scalar_t>() : nullptr;
  scalar_t* o = out.data_ptr<scalar_t>();
  if (mode == kModeMax)
    reduceAll<kModeMax, false>(w, dim, idx, off, ps, num_bags, num_offsets, n, padding_idx, o);
  else if (mode == kModeMean)
    reduceAll<kModeMean, false>(w, dim, idx, off, ps, num_bags, num_offsets, n, padding_idx, o);
  else if (ps)
    reduceAll<kModeSum, true>(w, dim, idx, off, ps, num_bags, num_offsets, n, padding_idx, o);
  else
    reduceAll<kModeSum, false>(w, dim, idx, off, ps, num_bags, num_offsets, n, padding_idx, o);
  return true;
}

enum class Schema { kEmbeddingBag, kEmbeddingBagPadding, kUnderscore, kForwardOnly };

struct BagArgs {
  Schema schema = Schema::kEmbeddingBag;
  bool scale_grad = false;
  int64_t mode = 0;
  bool sparse = false;
  bool include_last_offset = false;
  c10::optional<int64_t> padding_idx;  // as given (embedding_bag wraps it; _embedding_bag: -1 = none)
};

// Runs ATen's op of the node's schema (what the interpreter runs).
void bagGeneric(const BagArgs& a, KernelContext& ctx) {
  const at::Tensor& w = ctx.tensor(0);
  const at::Tensor& ind = ctx.tensor(1);
  const at::Tensor& off = ctx.tensor(2);
  c10::optional<at::Tensor> psw;
  if (ctx.input(6).isTensor()) psw = ctx.input(6).toTensor();
  std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> r;
  switch (a.schema) {
    case Schema::kEmbeddingBag:
      r = at::embedding_bag(w, ind, off, a.scale_grad, a.mode, a.sparse, psw, a.include_last_offset);
      break;
    case Schema::kEmbeddingBagPadding:
      r = at::embedding_bag(w, ind, off, a.scale_grad, a.mode, a.sparse, psw, a.include_last_offset, a.padding_idx);
      break;
    case Schema::kUnderscore:
      r = at::_embedding_bag(w, ind, off, a.scale_grad, a.mode, a.sparse, psw, a.include_last_offset,
                             a.padding_idx.value_or(-1));
      break;
    case Schema::kForwardOnly:
      r = at::_embedding_bag_forward_only(w, ind, off, a.scale_grad, a.mode, a.sparse, psw, a.include_last_offset,
                                          a.padding_idx.value_or(-1));
      break;
  }
  ctx.output(0) = std::move(std::get<0>(r));
  ctx.output(1) = std::move(std::get<1>(r));
  ctx.output(2) = std::move(std::get<2>(r));
  ctx.output(3) = std::move(std::get<3>(r));
}

// The padding row to skip (-1: none), or nullopt when ATen must raise its range error.
std::optional<int64_t> paddingRow(const BagArgs& a, int64_t rows) {
  if (!a.padding_idx) return -1;
  const int64_t p = *a.padding_idx;
  if (a.schema == Schema::kUnderscore || a.schema == Schema::kForwardOnly) return p;  // used as given: a negative one matches no index
  if (p < -rows || p >= rows) return std::nullopt;
  return c10::maybe_wrap_dim(p, rows);
}

template <typename scalar_t>
bool reduceInto(const BagArgs& a, const at::Tensor& w, const at::Tensor& ind, const at::Tensor& off,
                const at::Tensor& psw, int64_t pad, at::Tensor& o) {
  return ind.scalar_type() == at::kLong
             ? reduceBags<scalar_t, int64_t>(w, ind, off, psw, a.mode, a.include_last_offset, pad, o)
             : reduceBags<scalar_t, int32_t>(w, ind, off, psw, a.mode, a.include_last_offset, pad, o);
}

void runBags(const BagArgs& a, KernelContext& ctx) {
  const at::Tensor& w = ctx.tensor(0);
  const at::Tensor& ind = ctx.tensor(1);
  const at::Tensor& off = ctx.tensor(2);
  const c10::IValue& psv = ctx.input(6);
  const auto it = ind.scalar_type(), wt = w.scalar_type();
  if (!isDenseCpu(w) || !isDenseCpu(ind) || !isDenseCpu(off) || w.dim() != 2 || ind.dim() != 1 || off.dim() != 1 ||
      (wt != at::kFloat && wt != at::kDouble) || !w.is_contiguous() || off.scalar_type() != it ||
      (it != at::kLong && it != at::kInt)) {
    bagGeneric(a, ctx);
    return;
  }
  static const at::Tensor kNone;
  const at::Tensor& psw = psv.isTensor() ? psv.toTensor() : kNone;
  if (psw.defined() && (a.mode != kModeSum || !isDenseCpu(psw) || psw.scalar_type() != wt || psw.dim() != 1 ||
                        psw.numel() != ind.numel())) {
    bagGeneric(a, ctx);  // ATen's error (or its own handling)
    return;
  }
  const std::optional<int64_t> pad = paddingRow(a, w.size(0));
  if (!pad) {
    bagGeneric(a, ctx);
    return;
  }
  c10::MaybeOwned<at::Tensor> ic = ind.expect_contiguous();
  c10::MaybeOwned<at::Tensor> oc = off.expect_contiguous();
  c10::MaybeOwned<at::Tensor> pc = psw.defined() ? psw.expect_contiguous() : c10::MaybeOwned<at::Tensor>::borrowed(psw);
  at::Tensor* o = retainedOut(ctx, 0, wt);
  at::Tensor fresh;
  if (!o || !o->is_contiguous()) {
    fresh = at::empty({0}, w.options());
    o = &fresh;
  }
  const bool ok = wt == at::kFloat ? reduceInto<float>(a, w, *ic, *oc, *pc, *pad, *o)
                                   : reduceInto<double>(a, w, *ic, *oc, *pc, *pad, *o);
  if (!ok) {
    bagGeneric(a, ctx);
    return;
  }
  if (fresh.defined()) ctx.output(0) = std::move(fresh);
}

// embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
//               per_sample_weights, include_last_offset[, padding_idx]) and
// _embedding_bag(..., include_last_offset, int padding_idx=-1) -> 4 tensors.
KernelFactory embeddingBag(Schema schema) {
  return [schema](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    if (numInputs(b) != (schema == Schema::kEmbeddingBag ? 8u : 9u) || b.node().outputs().size() != 4) return nullptr;
    if (outputsUsed(b.node(), 1)) return nullptr;  // only output 0 is produced
    BagArgs a;
    a.schema = schema;
    auto scale = constBool(b, 3), sparse = constBool(b, 5), last = constBool(b, 7);
    auto mode = constInt(b, 4);
    if (!scale || !mode || !sparse || !last) return nullptr;
    if (isConst(b, 6) && !constant(b, 6).isNone() && !constant(b, 6).isTensor()) return nullptr;
    a.scale_grad = *scale;
    a.mode = *mode;
    a.sparse = *sparse;
    a.include_last_offset = *last;
    if (schema != Schema::kEmbeddingBag) {
      if (!isConst(b, 8)) return nullptr;
      if (constant(b, 8).isInt())
        a.padding_idx = constant(b, 8).toInt();
      else if (!constant(b, 8).isNone())
        return nullptr;
    }
    if (a.mode != kModeSum && a.mode != kModeMean && a.mode != kModeMax) return nullptr;
    if (a.mode == kModeMax && a.sparse) return nullptr;  // ATen's own checks for this training-only combination
    return makeKernel("brisk embedding_bag sum/mean/max", [a](KernelContext& ctx) { runBags(a, ctx); });
  };
}

}  // namespace

void registerEmbeddingBag(PluginRegistrar& r) {
  r.outVariant("aten::embedding_bag", embeddingBag(Schema::kEmbeddingBag));
  r.outVariant("aten::embedding_bag.padding_idx", embeddingBag(Schema::kEmbeddingBagPadding));
  r.outVariant("aten::_embedding_bag", embeddingBag(Schema::kUnderscore));
  r.outVariant("aten::_embedding_bag_forward_only", embeddingBag(Schema::kForwardOnly));
}

}  // namespace brisk::ops_cpu::out
