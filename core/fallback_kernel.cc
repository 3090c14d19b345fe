#include "core/fallback_kernel.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "core/graph.h"
#include "core/runtime.h"

namespace brisk {
namespace {

class FallbackKernel final : public Kernel {
 public:
  FallbackKernel(torch::jit::Operation op, std::string what)
      : Kernel(KernelKind::kFallback), op_(std::move(op)), what_(std::move(what)) {}

  void run(KernelContext& ctx) const override {
    std::vector<c10::IValue>& stack = ctx.runtime().stack();
    stack.clear();  // a previous call may have thrown half-way
    for (size_t i = 0; i < ctx.numInputs(); ++i) stack.push_back(ctx.input(i));
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
};

}  // namespace

std::unique_ptr<Kernel> makeFallbackKernel(const Node& node) {
  torch::jit::Node* jn = node.jitNode();
  if (!jn) return nullptr;
  const torch::jit::Operator* op = jn->maybeOperator();
  if (!op) return nullptr;
  return std::make_unique<FallbackKernel>(op->getOperation(jn), "boxed " + c10::toString(op->schema().operator_name()));
}

}  // namespace brisk
