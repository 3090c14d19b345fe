// A PT2E quantized linear chain (quantized_chain.h) as one oneDNN int8 matmul: uint8
// rows with their zero point times the int8 weight with per-output scales (packed once
// per blocking), fp32 bias, the chain's activation, and a uint8 result (or fp32 where the
// program leaves it unquantized, as a classifier's last layer). Every row count runs
// here: at few rows a linear layer is bound by its weight's bytes, a quarter of fp32's.
#include <ATen/ATen.h>

#include <array>
#include <sstream>

#include "core/graph/graph.h"
#include "delegates/onednn/dnnl_runtime.h"
#include "delegates/onednn/folded_float_weight.h"
#include "delegates/onednn/fused_ops.h"
#include "delegates/onednn/int8_attr.h"
#include "delegates/onednn/packed_weights.h"
#include "delegates/onednn/quantized_ops.h"
#include "delegates/onednn/shape_cache.h"

namespace brisk::onednn {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct Int8LinearPlan {
  bool ok = false;
  dnnl::matmul prim;
  dnnl::memory weights;
  dnnl::memory::desc src, dst;
  size_t scratch_bytes = 0;
};

struct BoundInt8Linear {
  const Int8LinearPlan* plan = nullptr;
  dnnl::memory src, dst, scratch;
};

struct Int8LinearState final : DnnlState {
  std::array<BoundInt8Linear, ShapeCache<Int8LinearPlan>::kSlots + 1> bound;
  std::unique_ptr<const Int8LinearPlan> overflow;
};

class QuantizedLinear final : public CompiledPartition {
 public:
  QuantizedLinear(const QuantizedChain& c, const Partition& partition)
      : chain_(c.str()),
        out_type_(c.q ? at::kByte : at::kFloat),
        attr_(c, 0b10, /*zero_point_in_bias=*/true),
        float_weight_(c.float_weight, *c.folded, isReleasable(partition, c.float_weight)) {
    const Node& lin = *c.body.nodes[0];  // aten::linear(x, W [out, in], b)
    out_features_ = c.weight.size(0);
    in_features_ = c.weight.size(1);
    // oneDNN's weight is [in, out]: the program's [out, in] read in "ba" order.
    weights_ = std::make_unique<PackedWeights>(c.weight, dnnl::memory::desc({in_features_, out_features_}, dt::s8, tag::ba),
                                               PackedWeights::Dense::kShared);
    // The source's zero point goes into the bias (Int8Attr::biasWithZeroPoint): a linear
    // layer has no padding.
    const at::Tensor bias = lin.input(2)->constant().isNone() ? at::Tensor() : lin.input(2)->constant().toTensor();
    if (bias.defined() && bias.numel() != out_features_) throw std::runtime_error("bias does not match the weight");
    if (bias.defined() || c.x.zero_point != 0) {
      bias_ = c.x.zero_point != 0 ? Int8Attr::biasWithZeroPoint(c, bias) : bias.to(at::kFloat).contiguous();
      bias_md_ = dnnl::memory::desc({1, out_features_}, dt::f32, tag::ab);
      bias_mem_ = dnnl::memory(bias_md_, cpuEngine(), bias_.data_ptr());
    }
    x_input_ = inputIndex(partition.node, c.dq_x->input(0));
    plans_ = std::make_unique<ShapeCache<Int8LinearPlan>>([this](c10::IntArrayRef rows) { return plan(rows[0]); });
  }

  std::unique_ptr<KernelState> newState() const override { return std::make_unique<Int8LinearState>(); }
  bool run(KernelContext& ctx, KernelState* state) const override {
    if (serve(ctx, *static_cast<Int8LinearState*>(state))) return true;
    float_weight_.restore();  // the nested block runs the program's float ops next
    return false;
  }
  std::string describe() const override {
    std::ostringstream os;
    os << chain_ << " " << in_features_ << "->" << out_features_ << " (oneDNN int8 matmul, " << plans_->shapes()
       << " row counts prepared so far, " << weights_->formats() << " packed weight formats"
       << (float_weight_.released() ? ", float weight freed" : "") << ")";
    return os.str();
  }
  bool outputPlannable() const override { return true; }

 private:
  bool serve(KernelContext& ctx, Int8LinearState& st) const {
    const at::Tensor& x0 = ctx.tensor(x_input_);
    if (x0.scalar_type() != at::kByte || x0.layout() != at::kStrided || !x0.is_cpu() || x0.dim() < 2 ||
        x0.size(-1) != in_features_ || x0.numel() == 0)
      return false;
    const int64_t rows = x0.numel() / in_features_;
    size_t slot = 0;
    const Int8LinearPlan& p = plans_->get(c10::IntArrayRef(&rows, 1), st.overflow, &slot);
    if (!p.ok) return false;
    BoundInt8Linear& b = st.bound[slot];
    if (b.plan != &p || slot == ShapeCache<Int8LinearPlan>::kSlots) {
      b.plan = &p;
      b.src = unboundMemory(p.src);
      b.dst = unboundMemory(p.dst);
      if (p.scratch_bytes) b.scratch = unboundScratchpad(p.scratch_bytes);
    }
    const at::Tensor x = x0.is_contiguous() ? x0 : x0.contiguous();
    c10::SmallVector<int64_t, 4> sizes(x.sizes().begin(), x.sizes().end());
    sizes.back() = out_features_;
    at::Tensor y = at::empty(sizes, x.options().dtype(out_type_));
    at::Tensor scratch = scratchFor(p.scratch_bytes, x);
    b.src.set_data_handle(x.data_ptr());
    b.dst.set_data_handle(y.data_ptr());
    dnnl_exec_arg_t args[10];
    int n = 0;
    args[n++] = {DNNL_ARG_SRC, b.src.get()};
    args[n++] = {DNNL_ARG_WEIGHTS, p.weights.get()};
    args[n++] = {DNNL_ARG_DST, b.dst.get()};
    if (bias_.defined()) args[n++] = {DNNL_ARG_BIAS, bias_mem_.get()};
    if (scratch.defined()) {
      b.scratch.set_data_handle(scratch.data_ptr());
      args[n++] = {DNNL_ARG_SCRATCHPAD, b.scratch.get()};
    }
    n += attr_.appendArgs(args + n);
    st.execute(p.prim, args, n);
    ctx.output(0) = std::move(y);
    return true;
  }

  std::unique_ptr<const Int8LinearPlan> plan(int64_t rows) const {
    auto p = std::make_unique<Int8LinearPlan>();
    p->src = dnnl::memory::desc({rows, in_features_}, dt::u8, tag::ab);
    p->dst = dnnl::memory::desc({rows, out_features_}, out_type_ == at::kByte ? dt::u8 : dt::f32, tag::ab);
    try {
      const dnnl::matmul::primitive_desc pd(cpuEngine(), p->src,
                                            dnnl::memory::desc({in_features_, out_features_}, dt::s8, tag::any),
                                            bias_.defined() ? bias_md_ : dnnl::memory::desc(), p->dst, attr_.attr(nullptr));
      p->prim = dnnl::matmul(pd);
      p->weights = weights_->get(pd.weights_desc());
      p->scratch_bytes = pd.scratchpad_desc().get_size();
      p->ok = true;
    } catch (const dnnl::error&) {
      // No int8 kernel for this row count: the nested block runs (ok stays false).
    }
    return p;
  }

  std::string chain_;
  at::ScalarType out_type_;
  Int8Attr attr_;
  mutable FoldedFloatWeight float_weight_;
  int64_t out_features_ = 0, in_features_ = 0;
  std::unique_ptr<PackedWeights> weights_;
  at::Tensor bias_;
  dnnl::memory::desc bias_md_;
  dnnl::memory bias_mem_;
  size_t x_input_ = 0;
  std::unique_ptr<ShapeCache<Int8LinearPlan>> plans_;
};

}  // namespace

std::unique_ptr<CompiledPartition> compileQuantizedLinear(const QuantizedChain& chain, const Partition& p) {
  return std::make_unique<QuantizedLinear>(chain, p);
}

}  // namespace brisk::onednn
