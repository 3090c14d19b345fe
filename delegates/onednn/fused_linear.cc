// A linear layer chain as one oneDNN matmul primitive, called directly (libdnnl, as the
// convolutions are): x [rows, in] times the weight, plus bias, then the chain's post-op
// (an eltwise activation, or the add of another tensor as a binary post-op). oneDNN
// picks its kernels by instruction set (AVX-512, AVX2, AMX), never by CPU vendor, and
// never re-packs the weight per call, unlike MKL's sgemm that ATen's linear calls.
//
// Per row count (shape_cache.h) the partition builds one primitive, with the weight in
// the blocked format that primitive chose (packed_weights.h: one copy per format, shared
// by the row counts that ask for it, the dense weight freed when nothing else reads it);
// a call only points memory objects at the tensors and executes, with no allocation but
// the planned output and step-local scratch. Inputs with few rows go back to brisk's
// kernels (LinearOptions::min_rows), where brisk's small GEMM is faster, and so do calls
// too small to pay for a oneDNN call (LinearOptions::min_macs).
//
// In bf16 mode (LinearOptions::bf16) the weight is packed in bf16, each call rounds its
// input to bf16, and the kernel accumulates in fp32 and writes fp32 with the fp32 bias
// and residual: the values at the partition's edges stay fp32.
#include <ATen/ATen.h>

#include <algorithm>
#include <sstream>

#include "core/graph/graph.h"
#include "delegates/onednn/dnnl_runtime.h"
#include "delegates/onednn/fused_ops.h"
#include "delegates/onednn/packed_weights.h"
#include "delegates/onednn/post_ops.h"
#include "delegates/onednn/shape_cache.h"

namespace brisk::onednn {
namespace {

using tag = dnnl::memory::format_tag;
constexpr auto f32 = dnnl::memory::data_type::f32;
constexpr auto bf16 = dnnl::memory::data_type::bf16;

struct LinearPlan {
  bool ok = false;
  dnnl::matmul prim;
  dnnl::memory weights;  // oneDNN's blocked copy (PackedWeights), perhaps shared with other plans
  dnnl::memory::desc src, dst, other, f32_src;
  dnnl::reorder to_bf16;  // bf16 mode: the fp32 input rounded to the source
  size_t scratch_bytes = 0;
};

// A Runtime's memory objects for one plan: rebound to the call's tensors each call.
struct BoundLinear {
  const LinearPlan* plan = nullptr;
  dnnl::memory src, dst, other, scratch, f32_src;
};

struct LinearState final : DnnlState {
  std::array<BoundLinear, ShapeCache<LinearPlan>::kSlots + 1> bound;
  std::unique_ptr<const LinearPlan> overflow;
};

class FusedLinear final : public CompiledPartition {
 public:
  FusedLinear(const FusionChain& c, const Partition& partition, const LinearOptions& o)
      : chain_(c.str()), min_rows_(o.min_rows), min_macs_(o.min_macs), bf16_(o.bf16), unary_(c.unary) {
    const Node& lin = *c.nodes[0];
    const Value* x;
    const Value* w;
    const Value* b = nullptr;
    // oneDNN's weight is [in, out]: W^T. aten::linear holds W [out, in] (W^T is W read
    // in "ba" order); the core IR's addmm / mm / matmul hold W^T itself ("ab").
    const bool transposed = lin.key() == "aten::linear";
    if (transposed) {
      x = lin.input(0);
      w = lin.input(1);
      if (!lin.input(2)->constant().isNone()) b = lin.input(2);
    } else if (lin.key() == "aten::addmm") {
      x = lin.input(1);
      w = lin.input(2);
      b = lin.input(0);
    } else {  // mm, matmul: x @ W^T
      x = lin.input(0);
      w = lin.input(1);
    }
    two_d_only_ = lin.key() == "aten::mm" || lin.key() == "aten::addmm";
    const at::Tensor wt = w->constant().toTensor();
    if (wt.dim() != 2 || wt.scalar_type() != at::kFloat) throw std::runtime_error("not a 2-D fp32 weight");
    out_features_ = wt.size(transposed ? 0 : 1);
    in_features_ = wt.size(transposed ? 1 : 0);
    // A constant that is itself a transposed view (the core IR's folded permute) is read
    // through its contiguous storage, in the other order, rather than copied.
    const bool flip = !wt.is_contiguous() && wt.t().is_contiguous();
    const auto& rel = partition.releasable;
    weights_ = std::make_unique<PackedWeights>(
        flip ? wt.t() : wt,
        dnnl::memory::desc({in_features_, out_features_}, f32, transposed != flip ? tag::ba : tag::ab),
        std::find(rel.begin(), rel.end(), w) != rel.end() ? PackedWeights::Dense::kReleasable
                                                           : PackedWeights::Dense::kShared);
    if (b) {
      bias_ = b->constant().toTensor().contiguous();
      if (bias_.numel() != out_features_ || bias_.scalar_type() != at::kFloat)
        throw std::runtime_error("bias does not match the weight");
      bias_md_ = dnnl::memory::desc({1, out_features_}, f32, tag::ab);
      bias_mem_ = dnnl::memory(bias_md_, cpuEngine(), bias_.data_ptr());
    }
    dnnl::post_ops check;
    appendUnary(check, unary_);  // now: an op oneDNN lacks fails the compile, not a call
    x_input_ = inputIndex(partition.node, x);
    if (c.add) other_input_ = static_cast<int>(inputIndex(partition.node, c.add->input(c.add_other)));
    plans_ = std::make_unique<ShapeCache<LinearPlan>>([this](c10::IntArrayRef rows) { return plan(rows[0]); });
    packAtLoad();
  }

  std::unique_ptr<KernelState> newState() const override { return std::make_unique<LinearState>(); }

  bool run(KernelContext& ctx, KernelState* state) const override {
    if (serve(ctx, *static_cast<LinearState*>(state))) return true;
    weights_->restoreDense();  // the nested block reads the dense weight next
    return false;
  }

  std::string describe() const override {
    std::ostringstream os;
    os << chain_ << " " << in_features_ << "->" << out_features_ << " (oneDNN matmul" << (bf16_ ? " in bf16" : "")
       << ", " << plans_->shapes() << " row counts prepared so far, " << weights_->formats()
       << " packed weight formats" << (weights_->denseReleased() ? ", dense weight freed" : "") << "; under "
       << min_rows_ << " rows or " << min_macs_ << " multiply-adds: brisk's kernels)";
    return os.str();
  }
  bool outputPlannable() const override { return true; }

 private:
  // The partition's work; false, having written nothing, for inputs it does not serve.
  bool serve(KernelContext& ctx, LinearState& st) const {
    const at::Tensor& x0 = ctx.tensor(x_input_);
    if (x0.scalar_type() != at::kFloat || x0.layout() != at::kStrided || !x0.is_cpu() || x0.dim() < 2 ||
        (two_d_only_ && x0.dim() != 2) || x0.size(-1) != in_features_ || x0.numel() == 0)
      return false;
    const int64_t rows = x0.numel() / in_features_;
    if (rows < min_rows_ || rows * in_features_ * out_features_ < min_macs_) return false;
    at::Tensor other;
    if (other_input_ >= 0) {
      const at::Tensor& o = ctx.tensor(other_input_);
      if (o.scalar_type() != at::kFloat || o.layout() != at::kStrided || !o.is_cpu() || o.dim() != x0.dim() ||
          o.size(-1) != out_features_ || !std::equal(o.sizes().begin(), o.sizes().end() - 1, x0.sizes().begin()))
        return false;  // a broadcasting add: brisk's kernels
      other = o.is_contiguous() ? o : o.contiguous();
    }
    size_t slot = 0;
    const LinearPlan& p = plans_->get(c10::IntArrayRef(&rows, 1), st.overflow, &slot);
    if (!p.ok) return false;
    BoundLinear& b = st.bound[slot];
    if (b.plan != &p || slot == ShapeCache<LinearPlan>::kSlots) bind(b, p);
    const at::Tensor x = x0.is_contiguous() ? x0 : x0.contiguous();
    at::Tensor xb;  // bf16 mode: the rounded source
    if (bf16_) {
      xb = at::empty({rows, in_features_}, x.options().dtype(at::kBFloat16));
      b.f32_src.set_data_handle(x.data_ptr());
      b.src.set_data_handle(xb.data_ptr());
      st.reorder(p.to_bf16, b.f32_src, b.src);
    } else {
      b.src.set_data_handle(x.data_ptr());
    }
    c10::SmallVector<int64_t, 4> sizes(x.sizes().begin(), x.sizes().end());
    sizes.back() = out_features_;
    at::Tensor y = at::empty(sizes, x.options());
    b.dst.set_data_handle(y.data_ptr());
    at::Tensor scratch = scratchFor(p.scratch_bytes, x);
    dnnl_exec_arg_t args[6];
    int n = 0;
    args[n++] = {DNNL_ARG_SRC, b.src.get()};
    args[n++] = {DNNL_ARG_WEIGHTS, p.weights.get()};
    args[n++] = {DNNL_ARG_DST, b.dst.get()};
    if (bias_.defined()) args[n++] = {DNNL_ARG_BIAS, bias_mem_.get()};
    if (scratch.defined()) {
      b.scratch.set_data_handle(scratch.data_ptr());
      args[n++] = {DNNL_ARG_SCRATCHPAD, b.scratch.get()};
    }
    if (other.defined()) {
      b.other.set_data_handle(other.data_ptr());
      args[n++] = {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, b.other.get()};
    }
    st.execute(p.prim, args, n);
    ctx.output(0) = std::move(y);
    return true;
  }

  // This Runtime's memory objects for `p` (made on its first call with p's row count).
  static void bind(BoundLinear& b, const LinearPlan& p) {
    b.plan = &p;
    b.src = unboundMemory(p.src);
    b.dst = unboundMemory(p.dst);
    b.other = unboundMemory(p.other);
    if (p.to_bf16) b.f32_src = unboundMemory(p.f32_src);
    if (p.scratch_bytes) b.scratch = unboundScratchpad(p.scratch_bytes);
  }

  // Packs the weight now, in the blocking oneDNN's matmul asks for at 64 rows, so that
  // the copy (and the freeing of releasable dense bytes) happens at load, not in the
  // first inference: on AVX-512 the blocking does not depend on the row count (checked
  // for 1-512 rows), so the calls find it packed. A row count that asks for another
  // blocking packs that one on its first call, as before.
  void packAtLoad() {
    try {
      weights_->get(matmulPd(dnnl::memory::desc({64, in_features_}, bf16_ ? bf16 : f32, tag::ab),
                             dnnl::memory::desc({64, out_features_}, f32, tag::ab), dnnl::primitive_attr())
                        .weights_desc());
    } catch (const dnnl::error&) {
      // No kernel at that row count: the first call's plan packs (or falls back).
    }
  }

  // oneDNN's matmul from `src` to `dst` on this layer's weight (in the blocking oneDNN
  // picks, of src's type) and bias; throws dnnl::error when oneDNN has no kernel.
  dnnl::matmul::primitive_desc matmulPd(const dnnl::memory::desc& src, const dnnl::memory::desc& dst,
                                        const dnnl::primitive_attr& attr) const {
    return dnnl::matmul::primitive_desc(cpuEngine(), src,
                                        dnnl::memory::desc({in_features_, out_features_}, src.get_data_type(), tag::any),
                                        bias_.defined() ? bias_md_ : dnnl::memory::desc(), dst, attr);
  }

  // Built on a Runtime's first call with `rows` input rows, kept for the Module's life.
  std::unique_ptr<const LinearPlan> plan(int64_t rows) const {
    auto p = std::make_unique<LinearPlan>();
    const auto cdt = bf16_ ? bf16 : f32;
    p->src = dnnl::memory::desc({rows, in_features_}, cdt, tag::ab);
    p->dst = dnnl::memory::desc({rows, out_features_}, f32, tag::ab);
    p->other = p->dst;
    if (bf16_) {
      p->f32_src = dnnl::memory::desc({rows, in_features_}, f32, tag::ab);
      p->to_bf16 = dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), p->f32_src, cpuEngine(), p->src));
    }
    dnnl::post_ops ops;
    if (other_input_ >= 0) ops.append_binary(dnnl::algorithm::binary_add, p->other);
    appendUnary(ops, unary_);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    try {
      const dnnl::matmul::primitive_desc pd = matmulPd(p->src, p->dst, attr);
      p->prim = dnnl::matmul(pd);
      p->weights = weights_->get(pd.weights_desc());
      p->scratch_bytes = pd.scratchpad_desc().get_size();
      p->ok = true;
    } catch (const dnnl::error&) {
      // No kernel for this row count: the nested block runs (ok stays false).
    }
    return p;
  }

  std::string chain_;
  int64_t min_rows_, min_macs_;
  bool bf16_;
  Unary unary_;
  bool two_d_only_ = false;
  int64_t out_features_ = 0, in_features_ = 0;
  std::unique_ptr<PackedWeights> weights_;
  at::Tensor bias_;  // undefined: none
  dnnl::memory::desc bias_md_;
  dnnl::memory bias_mem_;
  size_t x_input_ = 0;
  int other_input_ = -1;
  std::unique_ptr<ShapeCache<LinearPlan>> plans_;
};

}  // namespace

std::unique_ptr<CompiledPartition> compileLinear(const FusionChain& chain, const Partition& p,
                                                 const LinearOptions& o) {
  return std::make_unique<FusedLinear>(chain, p, o);
}

}  // namespace brisk::onednn
