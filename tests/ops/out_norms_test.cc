// Out-variant kernels of ops_cpu/out_variant/norms.cc against the interpreter.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

// %<name>: a constant float tensor of `n` elements, offset + scale * sin(arange(n) + phase)
// (constant-folded by the frontend).
std::string constVectorIR(const std::string& name, int64_t n, double offset, double scale) {
  const std::string p = "%" + name;
  return "  " + p + "_n : int = prim::Constant[value=" + std::to_string(n) + "]()\n  " + p +
         "_none : NoneType = prim::Constant()\n  " + p + "_a : Tensor = aten::arange(" + p + "_n, " + p + "_none, " +
         p + "_none, " + p + "_none, " + p + "_none)\n  " + p + "_sin : Tensor = aten::sin(" + p + "_a)\n  " + p +
         "_sc : float = prim::Constant[value=" + std::to_string(scale) + "]()\n  " + p + "_of : float = prim::Constant[value=" +
         std::to_string(offset) + "]()\n  " + p + "_m : Tensor = aten::mul(" + p + "_sin, " + p + "_sc)\n  " + p +
         "_one : int = prim::Constant[value=1]()\n  " + p + " : Tensor = aten::add(" + p + "_m, " + p + "_of, " + p +
         "_one)\n";
}

TEST(OutNorms, LayerNorm) {
  OpTester("graph(%x : Tensor):\n" + constVectorIR("w", 8, 1.0, 0.5) + constVectorIR("b", 8, 0.0, 0.2) +
           "  %shape : int[] = prim::Constant[value=[8]]()\n"
           "  %eps : float = prim::Constant[value=1e-05]()\n"
           "  %cudnn : bool = prim::Constant[value=1]()\n"
           "  %y : Tensor = aten::layer_norm(%x, %shape, %w, %b, %eps, %cudnn)\n"
           "  return (%y)\n")
      .inputs({at::randn({1, 3, 8})})
      .inputs({at::randn({4, 7, 8})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::layer_norm", kOut)
      .run();
}

TEST(OutNorms, LayerNormNoAffineTwoDimsNonContiguous) {
  OpTester(
      "graph(%x : Tensor):\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %shape : int[] = prim::Constant[value=[3, 4]]()\n"
      "  %eps : float = prim::Constant[value=0.001]()\n"
      "  %cudnn : bool = prim::Constant[value=0]()\n"
      "  %y : Tensor = aten::layer_norm(%x, %shape, %none, %none, %eps, %cudnn)\n"
      "  return (%y)\n")
      .inputs({at::randn({2, 3, 4})})
      .inputs({at::randn({4, 3, 5}).transpose(0, 2).slice(1, 0, 3)})  // [5, 3, 4] strided
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::layer_norm", kOut)
      .run();
}

std::string batchNormIR(int64_t c) {
  return "graph(%x : Tensor):\n" + constVectorIR("w", c, 1.0, 0.5) + constVectorIR("b", c, 0.0, 0.3) +
         constVectorIR("rm", c, 0.1, 0.2) + constVectorIR("rv", c, 1.5, 0.5) +
         "  %train : bool = prim::Constant[value=0]()\n"
         "  %mom : float = prim::Constant[value=0.1]()\n"
         "  %eps : float = prim::Constant[value=1e-05]()\n"
         "  %cudnn : bool = prim::Constant[value=1]()\n"
         "  %y : Tensor = aten::batch_norm(%x, %w, %b, %rm, %rv, %train, %mom, %eps, %cudnn)\n"
         "  return (%y)\n";
}

TEST(OutNorms, BatchNorm2d) {
  OpTester(batchNormIR(6))
      .inputs({at::randn({1, 6, 4, 4})})
      .inputs({at::randn({3, 6, 7, 5})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::batch_norm", kOut)
      .run();
  OpTester(batchNormIR(6))
      .inputs({at::randn({1, 6, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({3, 6, 7, 5}).contiguous(at::MemoryFormat::ChannelsLast)})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::batch_norm", kOut)
      .run();
}

TEST(OutNorms, BatchNorm1d) {
  OpTester(batchNormIR(5))
      .inputs({at::randn({2, 5})})
      .inputs({at::randn({9, 5})})
      .tolerance(Tolerance{1e-4, 1e-5})
      .expectKernel("aten::batch_norm", kOut)
      .run();
}

// _native_batch_norm_legit_no_training (core ATen IR), all three outputs returned: the
// normalized input, and the empty saved statistics ATen returns in inference.
std::string nativeBatchNormIR(int64_t c, const std::string& returned) {
  return "graph(%x : Tensor):\n" + constVectorIR("w", c, 1.0, 0.5) + constVectorIR("b", c, 0.0, 0.3) +
         constVectorIR("rm", c, 0.1, 0.2) + constVectorIR("rv", c, 1.5, 0.5) +
         "  %mom : float = prim::Constant[value=0.1]()\n"
         "  %eps : float = prim::Constant[value=1e-05]()\n"
         "  %y : Tensor, %sm : Tensor, %sv : Tensor = aten::_native_batch_norm_legit_no_training(%x, %w, %b, %rm, "
         "%rv, %mom, %eps)\n"
         "  %all : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%y, %sm, %sv)\n"
         "  return (" + returned + ")\n";
}

TEST(OutNorms, NativeBatchNormNoTraining) {
  for (const char* returned : {"%all", "%y"}) {
    SCOPED_TRACE(returned);
    OpTester(nativeBatchNormIR(6, returned))
        .inputs({at::randn({1, 6, 4, 4})})
        .inputs({at::randn({3, 6, 7, 5})})
        .tolerance(Tolerance{1e-4, 1e-5})
        .expectKernel("aten::_native_batch_norm_legit_no_training", kOut)
        .run();
    OpTester(nativeBatchNormIR(6, returned))
        .inputs({at::randn({5, 6})})
        .inputs({at::randn({2, 6})})
        .tolerance(Tolerance{1e-4, 1e-5})
        .expectKernel("aten::_native_batch_norm_legit_no_training", kOut)
        .run();
  }
}

// native_layer_norm (core ATen IR): with mean and rstd read (computed) or not (y only);
// ATen's own LayerNormKernel, so exact.
std::string nativeLayerNormIR(const std::string& returned) {
  return "graph(%x : Tensor):\n" + constVectorIR("w", 8, 1.0, 0.5) + constVectorIR("b", 8, 0.0, 0.2) +
         "  %shape : int[] = prim::Constant[value=[8]]()\n"
         "  %eps : float = prim::Constant[value=1e-05]()\n"
         "  %y : Tensor, %mean : Tensor, %rstd : Tensor = aten::native_layer_norm(%x, %shape, %w, %b, %eps)\n"
         "  %all : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%y, %mean, %rstd)\n"
         "  return (" + returned + ")\n";
}

TEST(OutNorms, NativeLayerNorm) {
  for (const char* returned : {"%all", "%y", "%rstd"}) {
    SCOPED_TRACE(returned);
    OpTester(nativeLayerNormIR(returned))
        .inputs({at::randn({1, 3, 8})})
        .inputs({at::randn({4, 7, 8})})
        .inputs({at::randn({8, 5, 2}).transpose(0, 2)})  // [2, 5, 8] strided
        .tolerance(Tolerance{0, 0, 0})
        .expectKernel("aten::native_layer_norm", kOut)
        .run();
  }
}

}  // namespace
}  // namespace brisk::testing
