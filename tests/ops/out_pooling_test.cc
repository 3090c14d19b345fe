// Out-variant kernels of ops_cpu/out/pooling.cc against the interpreter, including the
// output layout (channels-last in -> channels-last out, as the functional op does).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/irparser.h>

#include "core/module.h"
#include "core/runtime.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

// Runs `ir` on `x` with brisk (twice, so the retained output is reused) and with the
// interpreter; the outputs must have the same strides.
void expectSameLayout(const std::string& ir, const std::vector<at::Tensor>& xs) {
  auto module = Module::fromIR(ir, Options{}, "layout");
  auto rt = module->createRuntime();
  auto g = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(ir, g.get());
  torch::jit::GraphFunction ref("ref", g, nullptr);
  for (const at::Tensor& x : xs) {
    std::vector<c10::IValue> stack{x};
    ref.run(stack);
    at::Tensor expected = stack[0].toTensor();
    for (int rep = 0; rep < 2; ++rep) {
      at::Tensor actual = rt->run({x}).toTensor();
      EXPECT_EQ(actual.sizes(), expected.sizes());
      EXPECT_EQ(actual.strides(), expected.strides()) << "rep " << rep;
    }
  }
}

const char* kMaxPoolIR = R"IR(
graph(%x : Tensor):
  %k : int[] = prim::Constant[value=[3, 3]]()
  %s : int[] = prim::Constant[value=[2, 2]]()
  %p : int[] = prim::Constant[value=[1, 1]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %c : bool = prim::Constant[value=0]()
  %y : Tensor = aten::max_pool2d(%x, %k, %s, %p, %d, %c)
  return (%y)
)IR";

TEST(OutPooling, MaxPool2d) {
  OpTester(kMaxPoolIR)
      .inputs({at::randn({1, 3, 8, 8})})
      .inputs({at::randn({2, 5, 17, 12})})
      .expectKernel("aten::max_pool2d", kOut)
      .run();
}

TEST(OutPooling, MaxPool2dChannelsLastAndCeil) {
  OpTester(R"IR(
graph(%x : Tensor):
  %k : int[] = prim::Constant[value=[2, 2]]()
  %s : int[] = prim::ListConstruct()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %c : bool = prim::Constant[value=1]()
  %y : Tensor = aten::max_pool2d(%x, %k, %s, %p, %d, %c)
  return (%y)
)IR")
      .inputs({at::randn({1, 3, 7, 7}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({2, 5, 11, 9}).contiguous(at::MemoryFormat::ChannelsLast)})
      .expectKernel("aten::max_pool2d", kOut)
      .run();
  expectSameLayout(kMaxPoolIR, {at::randn({1, 3, 8, 8}).contiguous(at::MemoryFormat::ChannelsLast),
                                at::randn({1, 3, 8, 8}), at::randn({2, 4, 9, 9}).contiguous(at::MemoryFormat::ChannelsLast)});
}

TEST(OutPooling, MaxPool2dUnbatched) {
  OpTester(kMaxPoolIR)
      .inputs({at::randn({3, 8, 8})})
      .inputs({at::randn({5, 17, 12})})
      .expectKernel("aten::max_pool2d", kOut)
      .run();
}

TEST(OutPooling, AvgPool2d) {
  const char* ir = R"IR(
graph(%x : Tensor):
  %k : int[] = prim::Constant[value=[3, 3]]()
  %s : int[] = prim::Constant[value=[2, 2]]()
  %p : int[] = prim::Constant[value=[1, 1]]()
  %c : bool = prim::Constant[value=0]()
  %i : bool = prim::Constant[value=0]()
  %dv : NoneType = prim::Constant()
  %y : Tensor = aten::avg_pool2d(%x, %k, %s, %p, %c, %i, %dv)
  return (%y)
)IR";
  OpTester(ir)
      .inputs({at::randn({1, 3, 8, 8})})
      .inputs({at::randn({2, 5, 17, 12}).contiguous(at::MemoryFormat::ChannelsLast)})
      .expectKernel("aten::avg_pool2d", kOut)
      .run();
  expectSameLayout(ir, {at::randn({1, 3, 8, 8}).contiguous(at::MemoryFormat::ChannelsLast), at::randn({1, 3, 8, 8})});
}

TEST(OutPooling, AvgPool2dDivisor) {
  OpTester(R"IR(
graph(%x : Tensor):
  %k : int[] = prim::Constant[value=[2, 2]]()
  %s : int[] = prim::Constant[value=[2, 2]]()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %c : bool = prim::Constant[value=1]()
  %i : bool = prim::Constant[value=1]()
  %dv : int = prim::Constant[value=3]()
  %y : Tensor = aten::avg_pool2d(%x, %k, %s, %p, %c, %i, %dv)
  return (%y)
)IR")
      .inputs({at::randn({1, 3, 7, 7})})
      .inputs({at::randn({2, 5, 9, 12})})
      .expectKernel("aten::avg_pool2d", kOut)
      .run();
}

const char* kGlobalPoolIR = R"IR(
graph(%x : Tensor):
  %o : int[] = prim::Constant[value=[1, 1]]()
  %y : Tensor = aten::adaptive_avg_pool2d(%x, %o)
  return (%y)
)IR";

TEST(OutPooling, AdaptiveAvgPool2dGlobal) {
  OpTester(kGlobalPoolIR)
      .inputs({at::randn({1, 8, 7, 7})})
      .inputs({at::randn({3, 16, 9, 5})})
      .expectKernel("aten::adaptive_avg_pool2d", kOut)
      .run();
  OpTester(kGlobalPoolIR)
      .inputs({at::randn({1, 8, 7, 7}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({3, 16, 9, 5}).contiguous(at::MemoryFormat::ChannelsLast)})
      .expectKernel("aten::adaptive_avg_pool2d", kOut)
      .run();
  expectSameLayout(kGlobalPoolIR, {at::randn({2, 8, 7, 7}).contiguous(at::MemoryFormat::ChannelsLast),
                                   at::randn({2, 8, 7, 7}), at::randn({3, 4, 5, 5})});
}

TEST(OutPooling, AdaptiveAvgPool2dSized) {
  const char* ir = R"IR(
graph(%x : Tensor):
  %o : int[] = prim::Constant[value=[2, 3]]()
  %y : Tensor = aten::adaptive_avg_pool2d(%x, %o)
  return (%y)
)IR";
  OpTester(ir)
      .inputs({at::randn({1, 8, 7, 7})})
      .inputs({at::randn({3, 16, 9, 5}).contiguous(at::MemoryFormat::ChannelsLast)})
      .expectKernel("aten::adaptive_avg_pool2d", kOut)
      .run();
  expectSameLayout(ir, {at::randn({2, 8, 7, 7}).contiguous(at::MemoryFormat::ChannelsLast), at::randn({2, 8, 7, 7})});
}

}  // namespace
}  // namespace brisk::testing
