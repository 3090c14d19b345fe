#pragma once
// Shared helpers for ops_cpu's native kernels: a lambda-backed Kernel, argument
// readers that precompute constant arguments at load, and the "plain CPU tensor" test
// that guards the dispatcher-free fast paths.
#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>
#include <c10/util/SmallVector.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/graph.h"
#include "core/kernels/kernel_registry.h"
#include "core/kernels/plugin.h"

namespace brisk::ops_cpu::native {

template <typename F>
std::unique_ptr<Kernel> lambda(F f, std::string what) {
  return functionKernel(KernelKind::kNative, std::move(f), std::move(what));
}

// A strided, dense, non-quantized CPU tensor: the at::native:: CPU kernels apply to it
// directly. Anything else (MKLDNN, quantized, nested, sparse) goes through the
// dispatcher so its own kernel runs.
inline bool plainCpu(const at::Tensor& t) {
  return t.is_cpu() && t.layout() == c10::kStrided && !t.is_quantized() && !t.is_nested() &&
         !t.is_mkldnn();
}

using IntVec = c10::SmallVector<int64_t, 8>;

// Copies an int[] IValue into `out` (lists hold IValues, not a contiguous array).
inline void readIntList(const c10::IValue& v, IntVec& out) {
  out.clear();
  if (v.isIntList()) {
    const c10::List<int64_t> l = v.toIntList();
    out.reserve(l.size());
    for (size_t i = 0; i < l.size(); ++i) out.push_back(l.get(i));
    return;
  }
  for (const c10::IValue& e : v.toListRef()) out.push_back(e.toInt());
}

// An int[] argument: a constant is converted once at load, anything else per run.
class IntListArg {
 public:
  IntListArg(const Node& n, size_t i) : index_(i) {
    const Value* v = n.input(i);
    if (v->isConstant() && !v->constant().isNone()) {
      IntVec tmp;
      readIntList(v->constant(), tmp);
      constant_ = std::vector<int64_t>(tmp.begin(), tmp.end());
    }
  }
  // `buf` is caller-provided scratch (on the stack) for the non-constant case.
  c10::IntArrayRef get(const KernelContext& ctx, IntVec& buf) const {
    if (constant_) return *constant_;
    readIntList(ctx.input(index_), buf);
    return c10::IntArrayRef(buf.data(), buf.size());
  }

 private:
  size_t index_;
  std::optional<std::vector<int64_t>> constant_;
};

inline std::optional<int64_t> optInt(const c10::IValue& v) {
  if (v.isNone()) return std::nullopt;
  return v.toInt();
}

inline bool isConst(const Node& n, size_t i) { return n.input(i)->isConstant(); }
inline const c10::IValue& constant(const Node& n, size_t i) { return n.input(i)->constant(); }

// Per-family registration (one file each).
void registerViewKernels(PluginRegistrar& r);
void registerTensorInfoKernels(PluginRegistrar& r);
void registerScalarKernels(PluginRegistrar& r);
void registerListKernels(PluginRegistrar& r);
void registerTransformerKernels(PluginRegistrar& r);
void registerMessageKernels(PluginRegistrar& r);
void registerDictKernels(PluginRegistrar& r);
void registerRnnKernels(PluginRegistrar& r);
void registerFamilyTensorKernels(PluginRegistrar& r);
void registerNativeGroupNormKernel(PluginRegistrar& r);
void registerMoreViewKernels(PluginRegistrar& r);
void registerPt2BookkeepingKernels(PluginRegistrar& r);

}  // namespace brisk::ops_cpu::native
