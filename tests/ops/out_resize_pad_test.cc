// Out-variant kernels of ops_cpu/out_variant/resize_pad.cc (pad, constant_pad_nd,
// upsample_nearest{1,2,3}d) against the interpreter: element copies or ATen's own CPU
// out kernels, so results must match bit for bit.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;
const Tolerance kExact{0, 0, 0};

std::string padIR(const std::string& pad, const std::string& mode, const std::string& value_decl) {
  return "graph(%x : Tensor):\n  %p : int[] = prim::Constant[value=" + pad + "]()\n  %m : str = prim::Constant[value=\"" +
         mode + "\"]()\n  " + value_decl + "\n  %y : Tensor = aten::pad(%x, %p, %m, %v)\n  return (%y)\n";
}

TEST(OutResizePad, PadConstantValue) {
  OpTester(padIR("[1, 2, 0, 3]", "constant", "%v : float = prim::Constant[value=0.5]()"))
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({2, 3, 4, 5})})
      .inputs({at::randn({5, 4}).t()})                  // non-contiguous
      .inputs({at::arange(6).view({2, 3})})             // int64: the value converts as ATen's fill_
      .inputs({at::randn({1, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast)})  // ATen's layout
      .tolerance(kExact)
      .expectKernel("aten::pad", kOut)
      .run();
}

// Pad amounts computed per run (Swin pads each stage to a multiple of its window):
// a list built at run time, for aten::pad and constant_pad_nd.
TEST(OutResizePad, PadAmountsComputedPerRun) {
  for (const char* op : {"aten::pad(%x, %pads, %mode, %none)", "aten::constant_pad_nd(%x, %pads, %zero)"}) {
    SCOPED_TRACE(op);
    OpTester(std::string("graph(%x : Tensor, %p : int):\n"
                         "  %0 : int = prim::Constant[value=0]()\n"
                         "  %zero : float = prim::Constant[value=0.]()\n"
                         "  %mode : str = prim::Constant[value=\"constant\"]()\n"
                         "  %none : NoneType = prim::Constant()\n"
                         "  %pads : int[] = prim::ListConstruct(%0, %0, %0, %p, %0, %p)\n"
                         "  %y : Tensor = ") +
             op + "\n  return (%y)\n")
        .inputs({at::randn({2, 5, 5, 3}), int64_t{3}})
        .inputs({at::randn({1, 4, 4, 3}), int64_t{0}})
        .inputs({at::randn({1, 4, 4, 3}), int64_t{-1}})  // negative: crops
        .tolerance(kExact)
        .expectKernel(std::string(op).rfind("aten::pad", 0) == 0 ? "aten::pad" : "aten::constant_pad_nd", kOut)
        .run();
  }
}

TEST(OutResizePad, PadConstantNoneNegativeCrops) {
  OpTester(padIR("[-1, 2, 1, -2]", "constant", "%v : NoneType = prim::Constant()"))
      .inputs({at::randn({4, 5})})
      .inputs({at::randn({3, 7, 6})})
      .tolerance(kExact)
      .expectKernel("aten::pad", kOut)
      .run();
}

TEST(OutResizePad, PadConstantOnlyCrops) {
  OpTester(padIR("[-1, -1]", "constant", "%v : NoneType = prim::Constant()"))
      .inputs({at::randn({4, 5})})
      .inputs({at::randn({2, 3})})
      .tolerance(kExact)
      .expectKernel("aten::pad", kOut)
      .run();
}

TEST(OutResizePad, PadReflect1dAnd2d) {
  OpTester(padIR("[2, 1]", "reflect", "%v : NoneType = prim::Constant()"))
      .inputs({at::randn({3, 5})})       // unbatched
      .inputs({at::randn({2, 3, 6})})
      .inputs({at::randn({2, 6, 3}).transpose(1, 2)})
      .tolerance(kExact)
      .expectKernel("aten::pad", kOut)
      .run();
  OpTester(padIR("[1, 1, 2, 0]", "reflect", "%v : NoneType = prim::Constant()"))
      .inputs({at::randn({1, 2, 4, 5})})
      .inputs({at::randn({2, 5, 6})})
      .tolerance(kExact)
      .expectKernel("aten::pad", kOut)
      .run();
}

TEST(OutResizePad, PadReplicate3d) {
  OpTester(padIR("[1, 0, 0, 2, 1, 1]", "replicate", "%v : NoneType = prim::Constant()"))
      .inputs({at::randn({1, 2, 3, 4, 5})})
      .inputs({at::randn({2, 3, 3, 2})})
      .tolerance(kExact)
      .expectKernel("aten::pad", kOut)
      .run();
}

TEST(OutResizePad, ConstantPadNd) {
  OpTester(R"IR(
graph(%x : Tensor):
  %p : int[] = prim::Constant[value=[0, 1, 2, 0]]()
  %v : int = prim::Constant[value=-3]()
  %y : Tensor = aten::constant_pad_nd(%x, %p, %v)
  return (%y)
)IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randint(9, {2, 4, 5}, at::kInt)})
      .inputs({at::randn({0, 3})})  // empty input, non-empty output
      .tolerance(kExact)
      .expectKernel("aten::constant_pad_nd", kOut)
      .run();
}

TEST(OutResizePad, UpsampleNearest1dScale) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %s : float[] = prim::Constant[value=[2.5]]()
  %y : Tensor = aten::upsample_nearest1d(%x, %none, %s)
  return (%y)
)IR")
      .inputs({at::randn({1, 2, 5})})
      .inputs({at::randn({3, 4, 8})})
      .inputs({at::randn({8, 4, 3}).transpose(0, 2)})
      .tolerance(kExact)
      .expectKernel("aten::upsample_nearest1d.vec", kOut)
      .run();
}

TEST(OutResizePad, UpsampleNearest2dSize) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %sz : int[] = prim::Constant[value=[5, 7]]()
  %y : Tensor = aten::upsample_nearest2d(%x, %sz, %none)
  return (%y)
)IR")
      .inputs({at::randn({1, 2, 3, 4})})
      .inputs({at::randn({2, 3, 10, 9})})  // downsampling
      .inputs({at::randn({1, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast)})
      .tolerance(kExact)
      .expectKernel("aten::upsample_nearest2d.vec", kOut)
      .run();
}

TEST(OutResizePad, UpsampleNearest2dScaleRuntime) {
  OpTester(R"IR(
graph(%x : Tensor, %f : float):
  %none : NoneType = prim::Constant()
  %s : float[] = prim::ListConstruct(%f, %f)
  %y : Tensor = aten::upsample_nearest2d(%x, %none, %s)
  return (%y)
)IR")
      .inputs({at::randn({1, 2, 3, 4}), c10::IValue(2.0)})
      .inputs({at::randn({2, 1, 5, 6}), c10::IValue(1.7)})
      .tolerance(kExact)
      .expectKernel("aten::upsample_nearest2d.vec", kOut)
      .run();
}

TEST(OutResizePad, UpsampleNearest3d) {
  OpTester(R"IR(
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %s : float[] = prim::Constant[value=[2.0, 1.5, 3.0]]()
  %y : Tensor = aten::upsample_nearest3d(%x, %none, %s)
  return (%y)
)IR")
      .inputs({at::randn({1, 2, 2, 3, 2})})
      .inputs({at::randn({2, 1, 3, 2, 4})})
      .tolerance(kExact)
      .expectKernel("aten::upsample_nearest3d.vec", kOut)
      .run();
}

// The core IR's overloads (output size and per-dim scales).
TEST(OutResizePad, UpsampleNearestSizedOverloads) {
  OpTester(R"IR(
graph(%v : Tensor, %x : Tensor, %z : Tensor):
  %none : NoneType = prim::Constant()
  %s1 : int[] = prim::Constant[value=[9]]()
  %s2 : int[] = prim::Constant[value=[6, 8]]()
  %s3 : int[] = prim::Constant[value=[4, 6, 8]]()
  %sc : float = prim::Constant[value=2.0]()
  %a : Tensor = aten::upsample_nearest1d(%v, %s1, %sc)
  %b : Tensor = aten::upsample_nearest2d(%x, %s2, %sc, %sc)
  %c : Tensor = aten::upsample_nearest3d(%z, %s3, %none, %sc, %none)
  %out : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c)
  return (%out)
)IR")
      .inputs({at::randn({2, 3, 4}), at::randn({1, 2, 3, 4}), at::randn({1, 2, 2, 3, 4})})
      .inputs({at::randn({1, 1, 5}), at::randn({2, 1, 3, 5}), at::randn({1, 1, 3, 3, 3})})
      .tolerance(kExact)
      .expectKernel("aten::upsample_nearest1d", kOut)
      .expectKernel("aten::upsample_nearest2d", kOut)
      .expectKernel("aten::upsample_nearest3d", kOut)
      .run();
}

}  // namespace
}  // namespace brisk::testing
