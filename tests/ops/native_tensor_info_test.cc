// ops_cpu native tensor-metadata kernels against the interpreter.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kNative = KernelKind::kNative;

TEST(NativeTensorInfo, Size) {
  OpTester(R"IR(
graph(%x : Tensor):
  %s : int[] = aten::size(%x)
  return (%s))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4, 5})})
      .expectKernel("aten::size", kNative)
      .run();
}

TEST(NativeTensorInfo, SizeInt) {
  OpTester(R"IR(
graph(%x : Tensor, %d : int):
  %s : int = aten::size(%x, %d)
  return (%s))IR")
      .inputs({at::randn({2, 3}), c10::IValue(int64_t{1})})
      .inputs({at::randn({4, 5}), c10::IValue(int64_t{-2})})
      .expectKernel("aten::size.int", kNative)
      .run();
}

// sym_size.int (a PT2 program's dynamic batch, e.g. resnet18.dyn.core.pt2): size.int.
TEST(NativeTensorInfo, SymSizeInt) {
  OpTester(R"IR(
graph(%x : Tensor, %d : int):
  %s : SymInt = aten::sym_size(%x, %d)
  return (%s))IR")
      .inputs({at::randn({2, 3}), c10::IValue(int64_t{1})})
      .inputs({at::randn({4, 5}), c10::IValue(int64_t{-2})})
      .expectKernel("aten::sym_size.int", kNative)
      .run();
}

TEST(NativeTensorInfo, DimNumelLen) {
  OpTester(R"IR(
graph(%x : Tensor):
  %d : int = aten::dim(%x)
  %n : int = aten::numel(%x)
  %l : int = aten::len(%x)
  %out : (int, int, int) = prim::TupleConstruct(%d, %n, %l)
  return (%out))IR")
      .inputs({at::randn({2, 3})})
      .inputs({at::randn({4, 5})})
      .expectKernel("aten::dim", kNative)
      .expectKernel("aten::numel", kNative)
      .expectKernel("aten::len.Tensor", kNative)
      .run();
}

TEST(NativeTensorInfo, DtypeDeviceFlags) {
  OpTester(R"IR(
graph(%x : Tensor, %i : Tensor):
  %a : int = prim::dtype(%x)
  %b : int = prim::dtype(%i)
  %c : Device = prim::device(%x)
  %d : bool = prim::is_cuda(%x)
  %e : bool = prim::is_nested(%x)
  %f : bool = prim::requires_grad(%x)
  %g : bool = aten::is_floating_point(%x)
  %h : bool = aten::is_floating_point(%i)
  %k : int = prim::layout(%x)
  %out : (int, int, Device, bool, bool, bool, bool, bool, int) = prim::TupleConstruct(%a, %b, %c, %d, %e, %f, %g, %h, %k)
  return (%out))IR")
      .inputs({at::randn({2, 3}), at::arange(4)})
      .inputs({at::randn({4, 5}), at::arange(9)})
      .expectKernel("prim::dtype", kNative)
      .expectKernel("prim::device", kNative)
      .expectKernel("prim::is_cuda", kNative)
      .expectKernel("prim::is_nested", kNative)
      .expectKernel("prim::requires_grad", kNative)
      .expectKernel("aten::is_floating_point", kNative)
      .expectKernel("prim::layout", kNative)
      .run();
}

TEST(NativeTensorInfo, GlobalModes) {
  OpTester(R"IR(
graph(%x : Tensor):
  %a : bool = aten::is_grad_enabled()
  %b : bool = aten::is_autocast_enabled()
  %out : (bool, bool) = prim::TupleConstruct(%a, %b)
  return (%out))IR")
      .inputs({at::randn({2})})
      .inputs({at::randn({3})})
      .expectKernel("aten::is_grad_enabled", kNative)
      .expectKernel("aten::is_autocast_enabled", kNative)
      .run();
}

TEST(NativeTensorInfo, DeviceTypeName) {
  OpTester(R"IR(
graph(%x : Tensor):
  %d : Device = prim::device(%x)
  %s : str = prim::type(%d)
  return (%s))IR")
      .inputs({at::randn({2})})
      .inputs({at::randn({3})})
      .expectKernel("prim::type", kNative)
      .run();
}

}  // namespace
}  // namespace brisk::testing
