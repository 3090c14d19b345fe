#include "ops_cpu/native/attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/common/options.h"
#include "ops_cpu/native/common.h"
#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/simd/attention.h"

namespace brisk::ops_cpu::native {
namespace {

using out::AttentionDims;
using out::AttentionMath;

// The per-thread scratch of one head, grown to the largest shape seen, then reused.
void* headScratch(size_t bytes) {
  thread_local std::vector<uint8_t> buf;
  if (buf.size() < bytes + 64) buf.resize(bytes + 64);
  uint8_t* p = buf.data();
  return p + (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
}

bool rowsContiguous(const at::Tensor& t) { return t.stride(-1) == 1 || t.size(-1) == 1; }

// Whether the kernel serves these operands; fills `dims` when it does.
bool serves(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, AttentionDims& dims) {
  const int64_t r = q.dim();
  if ((r != 3 && r != 4) || k.dim() != r || v.dim() != r) return false;
  for (const at::Tensor* t : {&q, &k, &v})
    if (!plainCpu(*t) || t->scalar_type() != at::kFloat || !rowsContiguous(*t)) return false;
  for (int64_t i = 0; i < r - 2; ++i)
    if (k.size(i) != q.size(i) || v.size(i) != q.size(i)) return false;
  dims = {q.size(-2), k.size(-2), q.size(-1), v.size(-1)};
  return k.size(-1) == dims.d && v.size(-2) == dims.s && dims.l > 0 && dims.s > 0 && dims.d > 0 && dims.dv > 0 &&
         dims.l * ((dims.s + 15) / 16 * 16) <= kMaxScores;
}

class Sdpa {
 public:
  Sdpa(bool causal, std::optional<double> scale, AttentionMath math) : causal_(causal), scale_(scale), math_(math) {}

  void run(KernelContext& ctx, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
           const AttentionDims& dims) const {
    const bool four = q.dim() == 4;
    const int64_t b = q.size(0), h = four ? q.size(1) : 1;
    at::Tensor o = four ? at::empty({b, dims.l, h, dims.dv}, q.options()).transpose(1, 2)
                        : at::empty({b, dims.l, dims.dv}, q.options());
    const float scale = static_cast<float>(scale_ ? *scale_ : 1.0 / std::sqrt(static_cast<double>(dims.d)));
    const size_t bytes = out::attentionScratchBytes(dims, math_);
    const float *qp = q.data_ptr<float>(), *kp = k.data_ptr<float>(), *vp = v.data_ptr<float>();
    float* op = o.data_ptr<float>();
    // Head (bi, hi) of a rank-4 operand starts at bi * stride(0) + hi * stride(1).
    auto at_head = [four](const at::Tensor& t, int64_t bi, int64_t hi) {
      return bi * t.stride(0) + (four ? hi * t.stride(1) : 0);
    };
    at::parallel_for(0, b * h, 1, [&](int64_t begin, int64_t end) {
      void* scratch = headScratch(bytes);
      for (int64_t i = begin; i < end; ++i) {
        const int64_t bi = i / h, hi = i % h;
        out::attentionHead(dims, qp + at_head(q, bi, hi), q.stride(-2), kp + at_head(k, bi, hi), k.stride(-2),
                           vp + at_head(v, bi, hi), v.stride(-2), op + at_head(o, bi, hi), o.stride(-2), scale,
                           causal_, math_, scratch);
      }
    });
    ctx.output(0) = std::move(o);
  }

 private:
  bool causal_;
  std::optional<double> scale_;
  AttentionMath math_;
};

bool asksBf16(const Options& o) {
  return std::find(o.precision.begin(), o.precision.end(), "bf16") != o.precision.end();
}

}  // namespace

// scaled_dot_product_attention(Tensor query, Tensor key, Tensor value,
//   Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *,
//   float? scale=None, bool enable_gqa=False)
std::unique_ptr<Kernel> scaledDotProductAttention(KernelBuildContext& b) {
  const Node& n = b.node();
  if (n.inputs().size() != 8) return nullptr;
  auto aten = [](KernelContext& ctx) {
    const c10::IValue& scale = ctx.input(6);
    const c10::IValue& mask = ctx.input(3);
    ctx.output(0) = at::scaled_dot_product_attention(
        ctx.tensor(0), ctx.tensor(1), ctx.tensor(2),
        mask.isNone() ? c10::nullopt : c10::optional<at::Tensor>(mask.toTensor()), ctx.input(4).toDouble(),
        ctx.input(5).toBool(), scale.isNone() ? c10::nullopt : c10::optional<double>(scale.toDouble()),
        ctx.input(7).toBool());
  };
  const AttentionMath math =
      asksBf16(b.options()) && out::attentionRuns(AttentionMath::kBf16) ? AttentionMath::kBf16 : AttentionMath::kFp32;
  const std::optional<bool> causal = out::constBool(b, 5);
  const std::optional<double> scale = out::constDouble(b, 6);
  const bool own = out::attentionRuns(AttentionMath::kFp32) && out::isConstNone(b, 3) &&
                   out::constDouble(b, 4) == std::optional<double>(0.0) && causal &&
                   (out::isConstNone(b, 6) || scale) && out::constBool(b, 7) == std::optional<bool>(false);
  if (!own) return lambda(aten, "at::scaled_dot_product_attention");
  const Sdpa sdpa(*causal, scale, math);
  return lambda(
      [sdpa, aten](KernelContext& ctx) {
        const at::Tensor &q = ctx.tensor(0), &k = ctx.tensor(1), &v = ctx.tensor(2);
        AttentionDims dims;
        if (serves(q, k, v, dims))
          sdpa.run(ctx, q, k, v, dims);
        else
          aten(ctx);
      },
      std::string("brisk attention (") + (math == AttentionMath::kBf16 ? "bf16 products" : "fp32") +
          "; other operands: at::scaled_dot_product_attention)");
}

}  // namespace brisk::ops_cpu::native
