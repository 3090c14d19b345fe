#include "core/kernels/fallback_kernel.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "core/graph/graph.h"

namespace brisk {
namespace {

// The boxed call's stack: per thread (kernels of one Module run on several threads at
// once), reused so steady-state calls do not allocate.
std::vector<c10::IValue>& boxedStack() {
  thread_local std::vector<c10::IValue> s;
  return s;
}

class FallbackKernel final : public Kernel {
 public:
  FallbackKernel(torch::jit::Operation op, std::string what, bool vararg)
      : Kernel(KernelKind::kFallback), op_(std::move(op)), what_(std::move(what)), vararg_(vararg) {}

  void run(KernelContext& ctx) const override {
    std::vector<c10::IValue>& stack = boxedStack();
    stack.clear();  // a previous call may have thrown half-way
    const size_t num_inputs = ctx.numInputs();
    for (size_t i = 0; i < num_inputs; ++i) stack.push_back(ctx.input(i));
    // A vararg schema's operation (prim::Print, aten::format, ...) pops its argument
    // count first, as the interpreter's OPN instruction pushes it.
    if (vararg_) stack.emplace_back(static_cast<int64_t>(num_inputs));
    op_(stack);
    const size_t n = ctx.numOutputs();
    const size_t base = stack.size() - n;
    for (size_t i = 0; i < n; ++i) ctx.output(i) = std::move(stack[base + i]);
    stack.clear();
  }

  std::string describe() const override { return what_; }

 private:
  // Operation::operator() is non-const only by declaration; the JIT calls one
  // Operation from many threads too.
  mutable torch::jit::Operation op_;
  std::string what_;
  bool vararg_;
};

}  // namespace

std::unique_ptr<Kernel> makeFallbackKernel(const Node& node) {
  torch::jit::Node* jn = node.jitNode();
  if (!jn) return nullptr;
  const torch::jit::Operator* op = jn->maybeOperator();
  if (!op) return nullptr;
  const c10::FunctionSchema& schema = op->schema();
  return std::make_unique<FallbackKernel>(op->getOperation(jn), "boxed " + c10::toString(schema.operator_name()),
                                          schema.is_vararg());
}

}  // namespace brisk
