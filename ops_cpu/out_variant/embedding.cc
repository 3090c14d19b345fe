// embedding and embedding_bag (both schemas, including ".padding_idx").
//
// embedding: a row gather (ATen: weight.index_select(0, indices.reshape(-1)).view(...))
// into the reused output, for contiguous weights.
//
// embedding_bag, modes sum and mean, no per_sample_weights, float weights: the bags
// are reduced straight into the reused output, in index order (the order ATen's
// CPU kernel adds rows, so results are bitwise equal); padding_idx entries are skipped
// and, in mean mode, not counted (ATen: bag_size is decremented for them; the sum is
// divided by max(count, 1)). Only output 0 is produced: the factory declines nodes
// whose offset2bag / bag_size / max_indices outputs are used. Everything else (max
// mode, per-sample weights, other dtypes, malformed offsets) runs ATen's
// forward-only kernel, which reports errors exactly as the interpreter does.
#include <ATen/CPUFunctions.h>
#include <ATen/ops/_embedding_bag_forward_only_native.h>
#include <ATen/ops/resize_native.h>
#include <c10/core/WrapDimMinimal.h>

#include <cstring>

#include "ops_cpu/out_variant/common.h"

namespace brisk::ops_cpu::out {
namespace {

// --- embedding -------------------------------------------------------------------------

template <typename index_t>
void gatherRows(const at::Tensor& weight, const at::Tensor& indices, at::Tensor& out) {
  const int64_t rows = weight.size(0);
  const size_t row_bytes = static_cast<size_t>(weight.size(1)) * weight.element_size();
  const char* src = static_cast<const char*>(weight.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  const index_t* idx = indices.data_ptr<index_t>();
  const int64_t n = indices.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = static_cast<int64_t>(idx[i]);
    TORCH_CHECK_INDEX(r >= 0 && r < rows, "index out of range in self");
    std::memcpy(dst + i * row_bytes, src + r * row_bytes, row_bytes);
  }
}

std::unique_ptr<Kernel> embedding(KernelBuildContext& b) {
  if (numInputs(b) != 5) return nullptr;
  auto pad = constInt(b, 2);
  auto scale = constBool(b, 3), sparse = constBool(b, 4);
  if (!pad || !scale || !sparse) return nullptr;
  const int64_t p = *pad;
  const bool sc = *scale, sp = *sparse;
  return makeKernel("brisk row gather (embedding)", [p, sc, sp](KernelContext& ctx) {
    const at::Tensor& w = ctx.tensor(0);
    const at::Tensor& ind = ctx.tensor(1);
    const auto it = ind.scalar_type();
    if (!isDenseCpu(w) || !isDenseCpu(ind) || w.dim() != 2 || !w.is_contiguous() ||
        (it != at::kLong && it != at::kInt)) {
      ctx.output(0) = at::embedding(w, ind, p, sc, sp);
      return;
    }
    c10::MaybeOwned<at::Tensor> ic = ind.expect_contiguous();
    c10::SmallVector<int64_t, 6> sizes(ind.sizes().begin(), ind.sizes().end());
    sizes.push_back(w.size(1));
    at::Tensor* o = reusableOut(ctx, 0, w.scalar_type());
    if (!o) {
      ctx.output(0) = at::empty({0}, w.options());
      o = &ctx.output(0).toTensor();
    }
    at::native::resize_(*o, sizes, c10::nullopt);
    if (it == at::kLong)
      gatherRows<int64_t>(w, *ic, *o);
    else
      gatherRows<int32_t>(w, *ic, *o);
  });
}

// --- embedding_bag ---------------------------------------------------------------------

constexpr int64_t kModeSum = 0;
constexpr int64_t kModeMean = 1;

// Reduces bags of float rows into `out` ([num_bags, dim], contiguous). Returns false,
// writing nothing, when the offsets are not a valid non-decreasing partition (the
// caller then runs ATen, which raises its own error or handles it its own way).
template <typename index_t>
bool reduceBags(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets, int64_t mode,
                bool include_last_offset, int64_t padding_idx, at::Tensor& out) {
  const int64_t n = indices.numel();
  const int64_t num_offsets = offsets.numel();
  const int64_t num_bags = include_last_offset ? num_offsets - 1 : num_offsets;
  const index_t* off = offsets.data_ptr<index_t>();
  const index_t* idx = indices.data_ptr<index_t>();
  if (num_bags < 0) return false;
  if (num_offsets > 0) {
    if (off[0] != 0) return false;
    for (int64_t i = 1; i < num_offsets; ++i)
      if (off[i] < off[i - 1]) return false;
    if (off[num_offsets - 1] > n) return false;
  }
  const int64_t rows = weight.size(0);
  const int64_t dim = weight.size(1);
  for (int64_t i = 0; i < n; ++i)
    if (idx[i] < 0 || idx[i] >= rows) return false;
  at::native::resize_(out, {num_bags, dim}, c10::nullopt);
  const float* w = weight.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t bag = 0; bag < num_bags; ++bag) {
    const int64_t start = off[bag];
    const int64_t end = (bag + 1 < num_offsets) ? static_cast<int64_t>(off[bag + 1]) : n;
    float* dst = o + bag * dim;
    std::fill(dst, dst + dim, 0.f);
    int64_t count = 0;
    for (int64_t i = start; i < end; ++i) {
      const int64_t r = idx[i];
      if (r == padding_idx) continue;
      ++count;
      const float* src = w + r * dim;
      for (int64_t d = 0; d < dim; ++d) dst[d] += src[d];
    }
    if (mode == kModeMean) {
      const float div = static_cast<float>(std::max<int64_t>(count, 1));
      for (int64_t d = 0; d < dim; ++d) dst[d] /= div;
    }
  }
  return true;
}

struct BagArgs {
  bool scale_grad = false;
  int64_t mode = 0;
  bool sparse = false;
  bool include_last_offset = false;
  bool has_padding_schema = false;
  c10::optional<int64_t> padding_idx;
};

// Runs ATen's forward-only kernel (what aten::embedding_bag runs without autograd).
void bagGeneric(const BagArgs& a, KernelContext& ctx) {
  const at::Tensor& w = ctx.tensor(0);
  const at::Tensor& ind = ctx.tensor(1);
  const at::Tensor& off = ctx.tensor(2);
  c10::optional<at::Tensor> psw;
  if (ctx.input(6).isTensor()) psw = ctx.input(6).toTensor();
  std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> r =
      a.has_padding_schema
          ? at::embedding_bag(w, ind, off, a.scale_grad, a.mode, a.sparse, psw, a.include_last_offset, a.padding_idx)
          : at::embedding_bag(w, ind, off, a.scale_grad, a.mode, a.sparse, psw, a.include_last_offset);
  ctx.output(0) = std::move(std::get<0>(r));
  ctx.output(1) = std::move(std::get<1>(r));
  ctx.output(2) = std::move(std::get<2>(r));
  ctx.output(3) = std::move(std::get<3>(r));
}

KernelFactory embeddingBag(bool padding_schema) {
  return [padding_schema](KernelBuildContext& b) -> std::unique_ptr<Kernel> {
    if (numInputs(b) != (padding_schema ? 9u : 8u) || b.node().outputs().size() != 4) return nullptr;
    if (outputsUsed(b.node(), 1)) return nullptr;  // only output 0 is produced
    BagArgs a;
    a.has_padding_schema = padding_schema;
    auto scale = constBool(b, 3), sparse = constBool(b, 5), last = constBool(b, 7);
    auto mode = constInt(b, 4);
    if (!scale || !mode || !sparse || !last || !isConstNone(b, 6)) return nullptr;
    a.scale_grad = *scale;
    a.mode = *mode;
    a.sparse = *sparse;
    a.include_last_offset = *last;
    if (padding_schema) {
      if (!isConst(b, 8)) return nullptr;
      if (constant(b, 8).isInt())
        a.padding_idx = constant(b, 8).toInt();
      else if (!constant(b, 8).isNone())
        return nullptr;
    }
    if (a.mode != kModeSum && a.mode != kModeMean) return nullptr;
    return makeKernel("brisk embedding_bag sum/mean", [a](KernelContext& ctx) {
      const at::Tensor& w = ctx.tensor(0);
      const at::Tensor& ind = ctx.tensor(1);
      const at::Tensor& off = ctx.tensor(2);
      const auto it = ind.scalar_type();
      if (!isDenseCpu(w) || !isDenseCpu(ind) || !isDenseCpu(off) || w.dim() != 2 || ind.dim() != 1 ||
          off.dim() != 1 || w.scalar_type() != at::kFloat || !w.is_contiguous() || off.scalar_type() != it ||
          (it != at::kLong && it != at::kInt)) {
        bagGeneric(a, ctx);
        return;
      }
      int64_t pad = -1;
      if (a.padding_idx) {
        const int64_t rows = w.size(0);
        if (*a.padding_idx < -rows || *a.padding_idx >= rows) {
          bagGeneric(a, ctx);  // ATen's range error
          return;
        }
        pad = c10::maybe_wrap_dim(*a.padding_idx, rows);
      }
      c10::MaybeOwned<at::Tensor> ic = ind.expect_contiguous();
      c10::MaybeOwned<at::Tensor> oc = off.expect_contiguous();
      at::Tensor* o = retainedOut(ctx, 0, at::kFloat);
      at::Tensor fresh;
      if (!o || !o->is_contiguous()) {
        fresh = at::empty({0}, w.options());
        o = &fresh;
      }
      const bool ok = it == at::kLong ? reduceBags<int64_t>(w, *ic, *oc, a.mode, a.include_last_offset, pad, *o)
                                      : reduceBags<int32_t>(w, *ic, *oc, a.mode, a.include_last_offset, pad, *o);
      if (!ok) {
        bagGeneric(a, ctx);
        return;
      }
      if (fresh.defined()) ctx.output(0) = std::move(fresh);
    });
  };
}

}  // namespace

void registerEmbedding(PluginRegistrar& r) {
  r.outVariant("aten::embedding", embedding);
  r.outVariant("aten::embedding_bag", embeddingBag(false));
  r.outVariant("aten::embedding_bag.padding_idx", embeddingBag(true));
}

}  // namespace brisk::ops_cpu::out
