// ops_cpu::fused_pointwise (fused_pointwise.h): the kernel. At load it compiles its node
// (pointwise_compiler.h, over the op table of pointwise_ops.h); per call it checks the
// inputs' dtypes and shapes and runs the program, or else the original operators. Also
// the fused node's schema and the kernel's registration.
#include "ops_cpu/fused/fused_pointwise.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/resize_native.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "core/common/error.h"
#include "core/graph/graph.h"
#include "ops_cpu/fused/pointwise_compiler.h"
#include "ops_cpu/out_variant/common.h"
#include "ops_cpu/simd/pointwise_program.h"

namespace brisk::ops_cpu {
namespace {

using pointwise::Compiled;
using pointwise::InKind;
using pointwise::InputPlan;

// --- the kernel ------------------------------------------------------------------------

constexpr int kMaxDims = 8;

struct Shape {
  int64_t d[kMaxDims];
  int n = 0;
  int64_t numel() const {
    int64_t e = 1;
    for (int i = 0; i < n; ++i) e *= d[i];
    return e;
  }
};

// Broadcasts `s` into `into`; false when they do not broadcast or rank is too high.
bool broadcastInto(Shape& into, c10::IntArrayRef s) {
  const int r = static_cast<int>(s.size());
  if (r > kMaxDims) return false;
  if (r > into.n) {
    const int add = r - into.n;
    for (int i = into.n - 1; i >= 0; --i) into.d[i + add] = into.d[i];
    for (int i = 0; i < add; ++i) into.d[i] = 1;
    into.n = r;
  }
  for (int i = 1; i <= r; ++i) {
    int64_t& o = into.d[into.n - i];
    const int64_t v = s[r - i];
    if (v == o || v == 1) continue;
    if (o != 1) return false;
    o = v;
  }
  return true;
}

class FusedPointwiseKernel final : public Kernel {
 public:
  FusedPointwiseKernel(std::vector<PointwiseStep> steps, std::vector<int> outs, std::optional<Compiled> compiled,
                       std::string why)
      : Kernel(KernelKind::kOutVariant), steps_(std::move(steps)), outs_(std::move(outs)),
        compiled_(std::move(compiled)), why_(std::move(why)) {
    for (const PointwiseStep& st : steps_) {
      std::string name = st.key, overload;
      if (auto dot = name.find('.'); dot != std::string::npos) {
        overload = name.substr(dot + 1);
        name = name.substr(0, dot);
      }
      ops_.push_back(c10::Dispatcher::singleton().findSchemaOrThrow(name.c_str(), overload.c_str()));
    }
    if (!compiled_) return;
    // Constant scalars are broadcast once here, not per call.
    const auto& in = compiled_->inputs;
    const_tiles_.resize(in.size());
    for (size_t k = 0; k < in.size(); ++k) {
      if (in[k].kind != InKind::kConstScalar) continue;
      const_tiles_[k].assign(pw::kTile, in[k].value);
      if (in[k].shaped && !broadcastInto(const_shape_, in[k].shape)) compiled_.reset();
    }
  }

  void run(KernelContext& ctx) const override {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    if (!compiled_ || !runFused(ctx)) runOriginal(ctx);
  }

  std::string describe() const override {
    std::map<std::string, int> count;
    for (const PointwiseStep& st : steps_) ++count[st.key.substr(st.key.rfind(':') + 1)];
    std::string s = "brisk pointwise: " + std::to_string(steps_.size()) + " ops (";
    bool first = true;
    for (const auto& [k, n] : count) {
      s += (first ? "" : ", ") + k + (n > 1 ? " x" + std::to_string(n) : "");
      first = false;
    }
    s += ")";
    if (compiled_)
      s += std::string(" in one ") + pw::isaName(pw::bestIsa()) + " loop; others: the ATen ops";
    else
      s += " as the ATen ops (" + why_ + ")";
    return s;
  }

 private:
  // The fused path; false (nothing written) when this call's inputs are not its case.
  bool runFused(KernelContext& ctx) const {
    const Compiled& c = *compiled_;
    const size_t nin = c.inputs.size();
    pw::Input ins[64];
    c10::IntArrayRef sizes[64];
    Shape out = const_shape_;
    bool has_row = false;
    for (size_t k = 0; k < nin; ++k) {
      const InputPlan& p = c.inputs[k];
      pw::Input& x = ins[k];
      if (p.kind == InKind::kConstScalar) {
        x.kind = pw::InputKind::kScalar;
        x.data = const_tiles_[k].data();
        x.value = p.value;
        continue;
      }
      const c10::IValue& v = ctx.input(c.source[k]);
      if (p.kind == InKind::kScalar) {
        x.kind = pw::InputKind::kScalar;
        x.data = nullptr;
        if (v.isDouble())
          x.value = static_cast<float>(v.toDouble());
        else if (v.isInt())
          x.value = static_cast<float>(v.toInt());
        else if (v.isBool())
          x.value = v.toBool() ? 1.0f : 0.0f;
        else
          return false;
        continue;
      }
      if (!v.isTensor()) return false;
      const at::Tensor& t = v.toTensor();
      if (t.scalar_type() != at::kFloat || !out::isDenseCpu(t) || !t.is_contiguous()) return false;
      if (c.needs_rank && t.dim() == 0) return false;
      sizes[k] = t.sizes();
      if (!broadcastInto(out, sizes[k])) return false;
      x.data = t.data_ptr<float>();
    }
    const int64_t n = out.numel();
    const int64_t last = out.n > 0 ? out.d[out.n - 1] : 1;
    for (size_t k = 0; k < nin; ++k) {
      if (c.inputs[k].kind != InKind::kTensor) continue;
      pw::Input& x = ins[k];
      int64_t e = 1;
      for (int64_t s : sizes[k]) e *= s;
      if (e == n) {
        x.kind = pw::InputKind::kFull;
      } else if (e == 1) {
        x.kind = pw::InputKind::kScalar;
        x.value = x.data[0];
        x.data = nullptr;
      } else if (!sizes[k].empty() && sizes[k].back() == last && e == last) {
        x.kind = pw::InputKind::kRow;
        has_row = true;
      } else {
        return false;
      }
    }
    // Every output must have the full shape (an intermediate read outside the group may
    // depend on fewer inputs than the final result).
    const uint64_t tensors = tensorMask(c);
    for (uint64_t d : c.deps) {
      if ((d & tensors) == tensors) continue;
      Shape s = dependsShape(c, d, sizes);
      if (s.n != out.n || !std::equal(s.d, s.d + s.n, out.d)) return false;
    }
    for (const auto& [self_deps, result_deps] : c.inplace_checks) {
      const Shape a = dependsShape(c, self_deps, sizes), b = dependsShape(c, result_deps, sizes);
      if (a.n != b.n || !std::equal(a.d, a.d + a.n, b.d)) return false;
    }
    void* outs[64];
    const size_t nout = c.program.outputs.size();
    const c10::IntArrayRef out_sizes(out.d, out.n);
    for (size_t j = 0; j < nout; ++j) {
      const at::ScalarType dt = c.program.outputs[j].as_bool ? at::kBool : at::kFloat;
      at::Tensor* o = out::retainedOut(ctx, j, dt);
      if (o) {
        at::native::resize_(*o, out_sizes, c10::nullopt);
        if (!o->is_contiguous()) o = nullptr;
      }
      if (!o) {
        ctx.output(j) = at::empty(out_sizes, at::TensorOptions().dtype(dt));
        o = &ctx.output(j).toTensor();
      }
      outs[j] = o->data_ptr();
    }
    if (n == 0) return true;
    const int64_t inner = has_row ? last : n;
    constexpr int64_t kGrain = 32768;
    if (n >= 2 * kGrain && at::get_num_threads() > 1) {
      at::parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) { pw::run(c.program, ins, outs, b, e, inner); });
    } else {
      pw::run(c.program, ins, outs, 0, n, inner);
    }
    return true;
  }

  static uint64_t tensorMask(const Compiled& c) {
    uint64_t m = 0;
    for (size_t k = 0; k < c.inputs.size(); ++k)
      if (c.inputs[k].kind == InKind::kTensor || c.inputs[k].shaped) m |= uint64_t{1} << k;
    return m;
  }

  Shape dependsShape(const Compiled& c, uint64_t deps, const c10::IntArrayRef* sizes) const {
    Shape s;
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      if (!(deps >> k & 1)) continue;
      if (c.inputs[k].kind == InKind::kTensor)
        broadcastInto(s, sizes[k]);
      else if (c.inputs[k].shaped)
        broadcastInto(s, c.inputs[k].shape);
    }
    return s;
  }

  // The original operators, one after another (boxed, through the dispatcher).
  void runOriginal(KernelContext& ctx) const {
    std::vector<c10::IValue> results(steps_.size());
    std::vector<c10::IValue> stack;
    for (size_t s = 0; s < steps_.size(); ++s) {
      stack.clear();
      const std::vector<int>& a = steps_[s].args;
      for (size_t i = 1; i < a.size(); ++i) stack.push_back(a[i] >= 0 ? ctx.input(a[i]) : results[-a[i] - 1]);
      ops_[s].callBoxed(stack);
      results[s] = std::move(stack.at(0));
    }
    for (size_t j = 0; j < outs_.size(); ++j) ctx.output(j) = results[outs_[j]];
  }

  std::vector<PointwiseStep> steps_;
  std::vector<int> outs_;
  std::optional<Compiled> compiled_;
  std::string why_;
  std::vector<c10::OperatorHandle> ops_;
  std::vector<std::vector<float>> const_tiles_;
  Shape const_shape_;
};

std::unique_ptr<Kernel> makeFusedPointwise(KernelBuildContext& b) {
  const Node& n = b.node();
  auto attr = [&](const char* name) -> const c10::IValue* {
    auto it = n.attributes().find(name);
    return it == n.attributes().end() ? nullptr : &it->second;
  };
  const c10::IValue *ops = attr("ops"), *args = attr("args"), *outs = attr("outs");
  if (!ops || !args || !outs || !ops->isList() || !args->isIntList() || !outs->isIntList())
    throw Error(b.modelName() + ": " + n.describe() + ": " + kFusedPointwiseKind + " without its ops/args/outs");
  std::vector<PointwiseStep> steps;
  const std::vector<int64_t> flat = args->toIntVector();
  size_t pos = 0;
  for (const c10::IValue& k : ops->toListRef()) {
    PointwiseStep st;
    st.key = k.toStringRef();
    if (pos >= flat.size()) throw Error(b.modelName() + ": " + n.describe() + ": truncated args");
    const int64_t count = flat[pos];
    if (count < 0 || pos + 1 + count > flat.size())
      throw Error(b.modelName() + ": " + n.describe() + ": truncated args");
    st.args.assign(flat.begin() + pos, flat.begin() + pos + 1 + count);
    pos += 1 + count;
    steps.push_back(std::move(st));
  }
  std::vector<int> out_idx;
  for (int64_t o : outs->toIntVector()) out_idx.push_back(static_cast<int>(o));
  if (out_idx.size() != n.outputs().size())
    throw Error(b.modelName() + ": " + n.describe() + ": outs does not match the node's outputs");
  Compiled c;
  std::string why = pointwise::compile(steps, n.inputs(), out_idx, c);
  std::optional<Compiled> compiled;
  if (why.empty()) compiled = std::move(c);
  return std::make_unique<FusedPointwiseKernel>(std::move(steps), std::move(out_idx), std::move(compiled), why);
}

}  // namespace

const c10::FunctionSchema* fusedPointwiseSchema(size_t inputs, size_t outputs) {
  static std::mutex mu;
  // Never destroyed: nodes of any Module may point at them until the process ends.
  static auto* schemas = new std::map<std::pair<size_t, size_t>, std::unique_ptr<c10::FunctionSchema>>();
  std::lock_guard<std::mutex> lock(mu);
  auto& s = (*schemas)[{inputs, outputs}];
  if (!s) {
    std::vector<c10::Argument> args, rets;
    for (size_t i = 0; i < inputs; ++i) args.emplace_back("i" + std::to_string(i), c10::AnyType::get());
    for (size_t i = 0; i < outputs; ++i) rets.emplace_back("", c10::TensorType::get());
    s = std::make_unique<c10::FunctionSchema>(kFusedPointwiseKind, "", std::move(args), std::move(rets));
  }
  return s.get();
}

void registerFusedPointwise(PluginRegistrar& r) { r.outVariant(kFusedPointwiseKind, makeFusedPointwise); }

}  // namespace brisk::ops_cpu
