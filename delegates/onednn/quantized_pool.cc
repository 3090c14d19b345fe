// PT2E's quantized max pooling (quantized_chain.h) as one oneDNN uint8 max pooling over
// NHWC: the program's dequantize -> max_pool2d -> quantize with one scale and zero point
// gives exactly the largest uint8 value of each window, so nothing is converted to fp32
// (resnet18's stem pooling, batch 1 on one Zen 4 core: about 500 us as three fp32 passes).
#include <ATen/ATen.h>

#include <array>
#include <sstream>

#include "core/graph/graph.h"
#include "delegates/onednn/dnnl_runtime.h"
#include "delegates/onednn/fused_ops.h"
#include "delegates/onednn/quantized_ops.h"
#include "delegates/onednn/shape_cache.h"

namespace brisk::onednn {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct PoolPlan {
  bool ok = false;
  dnnl::pooling_forward prim;
  dnnl::memory::desc src, dst;
  std::array<int64_t, 4> out{};
  size_t scratch_bytes = 0;
};

struct BoundPool {
  const PoolPlan* plan = nullptr;
  dnnl::memory src, dst, scratch;
};

struct PoolState final : DnnlState {
  std::array<BoundPool, ShapeCache<PoolPlan>::kSlots + 1> bound;
  std::unique_ptr<const PoolPlan> overflow;
};

class QuantizedMaxPool2d final : public CompiledPartition {
 public:
  QuantizedMaxPool2d(const QuantizedMaxPool& p, const Partition& partition, bool nhwc_output)
      : p_(p), nhwc_output_(nhwc_output), x_input_(inputIndex(partition.node, p.dq->input(0))) {
    plans_ = std::make_unique<ShapeCache<PoolPlan>>([this](c10::IntArrayRef x) { return plan(x); });
  }

  std::unique_ptr<KernelState> newState() const override { return std::make_unique<PoolState>(); }
  bool run(KernelContext& ctx, KernelState* state) const override {
    return serve(ctx, *static_cast<PoolState*>(state));  // false: the nested block runs the program's ops
  }
  std::string describe() const override {
    std::ostringstream os;
    os << "uint8 max_pool2d " << p_.kernel[0] << "x" << p_.kernel[1] << " stride " << p_.stride[0]
       << " (oneDNN pooling in nhwc, " << plans_->shapes() << " input shapes prepared so far)";
    return os.str();
  }
  std::vector<std::string> edgeConversions() const override {
    return {"input: uint8 nhwc as it is, else to nhwc", nhwc_output_ ? "output: uint8 nhwc" : "output: uint8 nhwc -> nchw"};
  }
  bool outputPlannable() const override { return true; }

 private:
  // ATen's output size (pooling_shape.h), ceil_mode included: a last window must start
  // inside the input or its left padding.
  int64_t outSize(int64_t in, size_t d) const {
    const int64_t span = p_.dilation[d] * (p_.kernel[d] - 1) + 1;
    const int64_t numerator = in + 2 * p_.padding[d] - span + (p_.ceil_mode ? p_.stride[d] - 1 : 0);
    int64_t out = numerator / p_.stride[d] + 1;
    if (p_.ceil_mode && (out - 1) * p_.stride[d] >= in + p_.padding[d]) --out;
    return out;
  }

  bool serve(KernelContext& ctx, PoolState& st) const {
    const at::Tensor& x0 = ctx.tensor(x_input_);
    if (x0.scalar_type() != at::kByte || x0.layout() != at::kStrided || !x0.is_cpu() || x0.dim() != 4 || x0.numel() == 0)
      return false;
    size_t slot = 0;
    const PoolPlan& p = plans_->get(x0.sizes(), st.overflow, &slot);
    if (!p.ok) return false;
    BoundPool& b = st.bound[slot];
    if (b.plan != &p || slot == ShapeCache<PoolPlan>::kSlots) {
      b.plan = &p;
      b.src = unboundMemory(p.src);
      b.dst = unboundMemory(p.dst);
      if (p.scratch_bytes) b.scratch = unboundScratchpad(p.scratch_bytes);
    }
    const at::Tensor x = x0.contiguous(at::MemoryFormat::ChannelsLast);
    at::Tensor y = at::empty(p.out, x.options().memory_format(at::MemoryFormat::ChannelsLast));
    at::Tensor scratch = scratchFor(p.scratch_bytes, x);
    b.src.set_data_handle(x.data_ptr());
    b.dst.set_data_handle(y.data_ptr());
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, b.src.get()}, {DNNL_ARG_DST, b.dst.get()}, {DNNL_ARG_SCRATCHPAD, nullptr}};
    int n = 2;
    if (scratch.defined()) {
      b.scratch.set_data_handle(scratch.data_ptr());
      args[n++].memory = b.scratch.get();
    }
    st.execute(p.prim, args, n);
    // A reader that needs NCHW (rare: PT2E puts a dequantize after the pooling, which
    // keeps the layout) gets a copy.
    ctx.output(0) = nhwc_output_ ? std::move(y) : y.contiguous();
    return true;
  }

  std::unique_ptr<PoolPlan> plan(c10::IntArrayRef x) const {
    auto p = std::make_unique<PoolPlan>();
    const int64_t oh = outSize(x[2], 0), ow = outSize(x[3], 1);
    if (oh < 1 || ow < 1) return p;  // ATen's error, from the nested block
    p->out = {x[0], x[1], oh, ow};
    p->src = dnnl::memory::desc({x[0], x[1], x[2], x[3]}, dt::u8, tag::nhwc);
    p->dst = dnnl::memory::desc({x[0], x[1], oh, ow}, dt::u8, tag::nhwc);
    // The right padding that makes oneDNN produce ATen's output size.
    dnnl::memory::dims pad_r(2);
    for (size_t d = 0; d < 2; ++d) {
      const int64_t span = p_.dilation[d] * (p_.kernel[d] - 1) + 1;
      pad_r[d] = std::max<int64_t>(0, (p->out[2 + d] - 1) * p_.stride[d] + span - x[2 + d] - p_.padding[d]);
    }
    try {
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      const dnnl::pooling_forward::primitive_desc pd(
          cpuEngine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, p->src, p->dst,
          {p_.stride[0], p_.stride[1]}, {p_.kernel[0], p_.kernel[1]}, {p_.dilation[0] - 1, p_.dilation[1] - 1},
          {p_.padding[0], p_.padding[1]}, pad_r, attr);
      p->prim = dnnl::pooling_forward(pd);
      p->scratch_bytes = pd.scratchpad_desc().get_size();
      p->ok = true;
    } catch (const dnnl::error&) {
      // No kernel for this shape: the nested block runs (ok stays false).
    }
    return p;
  }

  QuantizedMaxPool p_;
  bool nhwc_output_;
  size_t x_input_;
  std::unique_ptr<ShapeCache<PoolPlan>> plans_;
};

}  // namespace

std::unique_ptr<CompiledPartition> compileQuantizedMaxPool(const QuantizedMaxPool& pool, const Partition& p,
                                                           bool nhwc_output) {
  return std::make_unique<QuantizedMaxPool2d>(pool, p, nhwc_output);
}

}  // namespace brisk::onednn
