// A plugin for the loader tests: registers an out-variant kernel for aten::atan2 that
// counts its calls (read by the test through brisk_test_plugin_calls), and a graph pass
// that rewrites neg(neg(x)) to x (tests/core/graph_pass_test.cc).
#include <ATen/ATen.h>
#include <ATen/CPUFunctions.h>

#include <atomic>

#include "core/graph/graph.h"
#include "core/kernels/plugin.h"

namespace {

std::atomic<int64_t> calls{0};

class CountingAtan2 final : public brisk::Kernel {
 public:
  CountingAtan2() : Kernel(brisk::KernelKind::kOutVariant) {}
  void run(brisk::KernelContext& ctx) const override {
    ++calls;
    c10::IValue& out = ctx.output(0);
    if (out.isTensor()) {
      at::Tensor& t = out.toTensor();
      at::cpu::atan2_out(t, ctx.tensor(0), ctx.tensor(1));
    } else {
      out = at::cpu::atan2(ctx.tensor(0), ctx.tensor(1));
    }
  }
  std::string describe() const override { return "counting atan2"; }
};

// Readers of neg(neg(x)) read x; the two negs are left unread for dead-code elimination.
size_t dropDoubleNeg(brisk::Graph& g, const brisk::PassContext&) {
  size_t changed = 0;
  for (brisk::Node* n : g.top()->nodes()) {
    const brisk::Node* inner = n->kind() == "aten::neg" ? n->input(0)->producer() : nullptr;
    if (inner && inner->kind() == "aten::neg" && g.replaceAllUses(n->output(0), inner->input(0)) > 0) ++changed;
  }
  return changed;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int64_t brisk_test_plugin_calls() { return calls.load(); }

BRISK_PLUGIN(registrar) {
  registrar.outVariant("aten::atan2", [](brisk::KernelBuildContext&) { return std::make_unique<CountingAtan2>(); });
  registrar.pass("drop_double_neg", brisk::kPassOrderFuse, dropDoubleNeg, "neg(neg(x)) -> x");
}
