#include "core/kernels/fallback_kernel.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "core/graph/fallback_op.h"
#include "core/graph/graph.h"

namespace brisk {
namespace {

// The boxed call's stack: per thread (kernels of one Module run on several threads at
// once), reused so steady-state calls do not allocate.
std::vector<c10::IValue>& boxedStack() {
  thread_local std::vector<c10::IValue> s;
  return s;
}

// One boxed call on the thread's stack: the inputs pushed, `call` run, the results
// (the last numOutputs() entries) moved out. `count_args` pushes the argument count
// too: a vararg schema's operation (prim::Print, aten::format, ...) pops it first, as
// the interpreter's OPN instruction pushes it.
template <typename Call>
void runBoxed(KernelContext& ctx, bool count_args, Call&& call) {
  std::vector<c10::IValue>& stack = boxedStack();
  stack.clear();  // a previous call may have thrown half-way
  const size_t num_inputs = ctx.numInputs();
  for (size_t i = 0; i < num_inputs; ++i) stack.push_back(ctx.input(i));
  if (count_args) stack.emplace_back(static_cast<int64_t>(num_inputs));
  call(stack);
  const size_t n = ctx.numOutputs();
  const size_t base = stack.size() - n;
  for (size_t i = 0; i < n; ++i) ctx.output(i) = std::move(stack[base + i]);
  stack.clear();
}

class FallbackKernel final : public Kernel {
 public:
  FallbackKernel(torch::jit::Operation op, std::string what, bool vararg)
      : Kernel(KernelKind::kFallback), op_(std::move(op)), what_(std::move(what)), vararg_(vararg) {}

  void run(KernelContext& ctx) const override {
    runBoxed(ctx, vararg_, [this](std::vector<c10::IValue>& stack) { op_(stack); });
  }

  std::string describe() const override { return what_; }

 private:
  // Operation::operator() is non-const only by declaration; the JIT calls one
  // Operation from many threads too.
  mutable torch::jit::Operation op_;
  std::string what_;
  bool vararg_;
};

// A node with a schema but no TorchScript node (the PT2 frontend's): the c10
// operator, called boxed through the dispatcher, which leaves exactly the returns on
// the stack.
class DispatcherKernel final : public Kernel {
 public:
  DispatcherKernel(c10::OperatorHandle op, std::string what)
      : Kernel(KernelKind::kFallback), op_(std::move(op)), what_(std::move(what)) {}

  void run(KernelContext& ctx) const override {
    runBoxed(ctx, false, [this](std::vector<c10::IValue>& stack) { op_.callBoxed(stack); });
  }

  std::string describe() const override { return what_; }

 private:
  c10::OperatorHandle op_;
  std::string what_;
};

std::unique_ptr<Kernel> makeSchemaFallback(const c10::FunctionSchema& schema) {
  const c10::OperatorName& name = schema.operator_name();
  if (auto op = c10::Dispatcher::singleton().findSchema(name))
    return std::make_unique<DispatcherKernel>(*op, "dispatcher " + c10::toString(name));
  // Operators only the JIT registers (scalar arithmetic such as aten::mul.int, dict
  // and list ops): their Operation needs no node unless the schema is vararg.
  if (schema.is_vararg()) return nullptr;
  std::shared_ptr<torch::jit::Operator> op = torch::jit::findOperatorFor(name);
  if (!op) return nullptr;
  return std::make_unique<FallbackKernel>(op->getOperation(), "boxed " + c10::toString(name), false);
}

}  // namespace

std::unique_ptr<Kernel> makeFallbackKernel(const Node& node) {
  const FallbackSource* source = node.frontend().fallback.get();
  if (!source) return node.schema() ? makeSchemaFallback(*node.schema()) : nullptr;
  std::optional<FallbackOp> op = source->operation();
  if (!op) return nullptr;
  return std::make_unique<FallbackKernel>(std::move(op->operation),
                                          "boxed " + c10::toString(op->schema->operator_name()),
                                          op->schema->is_vararg());
}

}  // namespace brisk
