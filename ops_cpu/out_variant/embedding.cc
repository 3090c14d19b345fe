// embedding: a row gather (ATen: weight.index_select(0, indices.reshape(-1)).view(...))
// into the reused output, for contiguous weights. (The bags: embedding_bag.cc.)
#include <ATen/CPUFunctions.h>
#include <ATen/ops/resize_native.h>

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

}  // namespace

void registerEmbedding(PluginRegistrar& r) {
  r.outVariant("aten::embedding", embedding);
}

}  // namespace brisk::ops_cpu::out
