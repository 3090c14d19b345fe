// A linear layer chain as one oneDNN matmul: mkldnn::_linear_pointwise (matmul + bias +
// one eltwise post-op) or its .binary form (+ add of another tensor), on a weight
// reordered once into oneDNN's blocked format. oneDNN picks its kernels by instruction
// set (AVX-512, AVX2, AMX), never by CPU vendor, and never re-packs the weight per call,
// unlike MKL's sgemm that ATen's linear calls. Inputs with few rows go back to brisk's
// kernels (LinearOptions::min_rows), where brisk's small GEMM is faster, and so do calls
// too small to pay for oneDNN's per-call cost (LinearOptions::min_macs).
//
// In bf16 mode (LinearOptions::bf16) the weight is packed in bf16, each call rounds its
// input (and a residual operand) to bf16, and the bf16 result comes back as fp32: the
// values at the partition's edges stay fp32.
#include <ATen/ATen.h>

#include <sstream>

#include "core/graph/graph.h"
#include "delegates/onednn/fused_ops.h"
#include "core/kernels/output_capture.h"
#include "delegates/onednn/mkldnn_ops.h"
#include "delegates/onednn/shape_cache.h"

namespace brisk::onednn {
namespace {

class FusedLinear final : public CompiledPartition {
 public:
  FusedLinear(const FusionChain& c, const Node& node, const LinearOptions& o)
      : chain_(c.str()), min_rows_(o.min_rows), min_macs_(o.min_macs), bf16_(o.bf16) {
    const Node& lin = *c.nodes[0];
    at::Tensor w, b;
    const Value* x;
    if (lin.key() == "aten::linear") {
      x = lin.input(0);
      w = lin.input(1)->constant().toTensor();
      if (!lin.input(2)->constant().isNone()) b = lin.input(2)->constant().toTensor();
    } else if (lin.key() == "aten::addmm") {
      x = lin.input(1);
      w = lin.input(2)->constant().toTensor().t();
      b = lin.input(0)->constant().toTensor();
    } else {  // mm, matmul: x @ W^T
      x = lin.input(0);
      w = lin.input(1)->constant().toTensor().t();
    }
    two_d_only_ = lin.key() == "aten::mm" || lin.key() == "aten::addmm";
    out_features_ = w.size(0);
    in_features_ = w.size(1);
    if (b.defined() && b.numel() != out_features_) throw std::runtime_error("bias does not match the weight");
    static const c10::OperatorHandle reorder = mkldnnOp("mkldnn::_reorder_linear_weight", "");
    // oneDNN's matmul blocks the weight by the number of rows it will meet.
    const at::ScalarType compute = bf16_ ? at::kBFloat16 : at::kFloat;
    weights_ = std::make_unique<ShapeCache<c10::IValue>>([w = w.to(compute).contiguous()](c10::IntArrayRef rows) {
      UnplannedAllocations outside_plan;
      torch::jit::Stack s{w, rows[0]};
      return std::make_unique<const c10::IValue>(callOne(reorder, s));
    });
    // The binary form takes a bias of the input's type; the unary one an fp32 bias too.
    bias_ = b.defined() ? c10::IValue((c.add ? b.to(compute) : b).contiguous()) : c10::IValue();
    x_input_ = inputIndex(node, x);
    if (c.add) {
      op_ = mkldnnOp("mkldnn::_linear_pointwise", "binary");
      other_input_ = static_cast<int>(inputIndex(node, c.add->input(c.add_other)));
    } else {
      op_ = mkldnnOp("mkldnn::_linear_pointwise", "");
    }
    attr_ = c.add ? std::string("add") : c.unary.attr;
    scalars_ = unaryScalars(c.unary.scalars);
    algorithm_ = optionalString(c.unary.algorithm);
  }

  std::unique_ptr<KernelState> newState() const override { return std::make_unique<CallState>(); }

  bool run(KernelContext& ctx, KernelState* state) const override {
    const at::Tensor& x0 = ctx.tensor(x_input_);
    if (x0.scalar_type() != at::kFloat || x0.layout() != at::kStrided || !x0.is_cpu() || x0.dim() < 2 ||
        (two_d_only_ && x0.dim() != 2) || x0.size(-1) != in_features_ || x0.numel() == 0 ||
        x0.numel() / in_features_ < min_rows_ || x0.numel() * out_features_ < min_macs_)
      return false;
    const at::Tensor x = bf16_ ? x0.to(at::kBFloat16, /*non_blocking=*/false, /*copy=*/false, at::MemoryFormat::Contiguous)
                         : x0.is_contiguous() ? x0
                                              : x0.contiguous();
    const int64_t rows = x.numel() / in_features_;
    // The op always sees a matrix. Given more dimensions it returns a reshaped view of
    // its matrix result, whose storage is then shared beyond the step, and the memory
    // plan drops the output (it was reallocated every run).
    torch::jit::Stack& s = static_cast<CallState*>(state)->stack;
    s.emplace_back(x.dim() == 2 ? x : x.view({rows, in_features_}));
    if (other_input_ >= 0) {
      const at::Tensor& other = ctx.tensor(other_input_);
      if (other.scalar_type() != at::kFloat || other.dim() != x.dim() || other.size(-1) != out_features_ ||
          !std::equal(other.sizes().begin(), other.sizes().end() - 1, x.sizes().begin())) {
        s.clear();
        return false;  // a broadcasting add: brisk's kernels
      }
      const at::Tensor o = bf16_ ? other.to(at::kBFloat16, false, false, at::MemoryFormat::Contiguous)
                           : other.is_contiguous() ? other
                                                   : other.contiguous();
      s.emplace_back(o.dim() == 2 ? o : o.view({rows, out_features_}));
    }
    size_t slot = 0;
    s.emplace_back(weights_->get(c10::IntArrayRef(&rows, 1), static_cast<CallState*>(state)->overflow, &slot));
    s.emplace_back(bias_);
    s.emplace_back(attr_);
    if (other_input_ < 0) {
      s.emplace_back(scalars_);
      s.emplace_back(algorithm_);
    }
    at::Tensor y = callOne(op_, s);
    if (bf16_) y = y.to(at::kFloat);
    if (x.dim() != 2) {
      // The matrix result is the op's own fresh tensor: give it the input's leading
      // dimensions in place rather than through a view.
      c10::SmallVector<int64_t, 4> sizes(x.sizes().begin(), x.sizes().end());
      sizes.back() = out_features_;
      y.unsafeGetTensorImpl()->set_sizes_contiguous(sizes);
    }
    ctx.output(0) = std::move(y);
    return true;
  }

  std::string describe() const override {
    std::ostringstream os;
    os << chain_ << " " << in_features_ << "->" << out_features_ << " (mkldnn::_linear_pointwise"
       << (bf16_ ? " in bf16" : "") << ", weight packed per row count: "
       << weights_->shapes() << " so far; "
       << "under " << min_rows_ << " rows or " << min_macs_ << " multiply-adds: brisk's kernels)";
    return os.str();
  }
  bool outputPlannable() const override { return true; }

 private:
  std::string chain_;
  int64_t min_rows_, min_macs_;
  bool bf16_;
  bool two_d_only_ = false;
  int64_t out_features_ = 0, in_features_ = 0;
  c10::OperatorHandle op_ = mkldnnOp("mkldnn::_linear_pointwise", "");
  std::unique_ptr<ShapeCache<c10::IValue>> weights_;
  c10::IValue bias_;
  size_t x_input_ = 0;
  int other_input_ = -1;
  c10::IValue attr_, scalars_, algorithm_;
};

}  // namespace

std::unique_ptr<CompiledPartition> compileLinear(const FusionChain& chain, const Node& node, const LinearOptions& o) {
  return std::make_unique<FusedLinear>(chain, node, o);
}

}  // namespace brisk::onednn
