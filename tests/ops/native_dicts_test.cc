// ops_cpu native dict kernels (ops_cpu/native/dicts.cc) against the interpreter: d[k],
// d.get, d[k] = v (mutation seen through every holder), len, `k in d`, keys / values /
// items in insertion order, for str, int and Tensor keys; KeyError on a missing key.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kNative = KernelKind::kNative;

TEST(NativeDicts, StrKeys) {
  OpTester(R"IR(
graph(%x : Tensor, %y : Tensor, %k : str):
  %a : str = prim::Constant[value="a"]()
  %b : str = prim::Constant[value="b"]()
  %c : str = prim::Constant[value="c"]()
  %two : int = prim::Constant[value=2]()
  %d : Dict(str, Tensor) = prim::DictConstruct(%a, %x, %b, %y)
  %xy : Tensor = aten::mul(%x, %two)
  aten::_set_item(%d, %c, %xy)
  aten::_set_item(%d, %a, %y)
  %ga : Tensor = aten::__getitem__(%d, %a)
  %gk : Tensor = aten::__getitem__(%d, %k)
  %get : Tensor? = aten::get(%d, %k)
  %getd : Tensor = aten::get(%d, %k, %x)
  %n : int = aten::len(%d)
  %has : bool = aten::__contains__(%d, %k)
  %ks : str[] = aten::keys(%d)
  %vs : Tensor[] = aten::values(%d)
  %it : (str, Tensor)[] = aten::items(%d)
  %r1 : (Tensor, Tensor, Tensor?, Tensor, int, bool) = prim::TupleConstruct(%ga, %gk, %get, %getd, %n, %has)
  %r2 : (str[], Tensor[], (str, Tensor)[], Dict(str, Tensor)) = prim::TupleConstruct(%ks, %vs, %it, %d)
  %r : ((Tensor, Tensor, Tensor?, Tensor, int, bool), (str[], Tensor[], (str, Tensor)[], Dict(str, Tensor))) = prim::TupleConstruct(%r1, %r2)
  return (%r))IR")
      .inputs({at::randn({2, 3}), at::randn({2, 3}), c10::IValue("b")})
      .inputs({at::randn({4, 5}), at::randn({4, 5}), c10::IValue("c")})
      .expectKernel("prim::DictConstruct", kNative)
      .expectKernel("aten::_set_item.str", kNative)
      .expectKernel("aten::__getitem__.Dict_str", kNative)
      .expectKernel("aten::get.str", kNative)
      .expectKernel("aten::get.default_str", kNative)
      .expectKernel("aten::len.Dict_str", kNative)
      .expectKernel("aten::__contains__.str", kNative)
      .expectKernel("aten::keys.str", kNative)
      .expectKernel("aten::values.str", kNative)
      .expectKernel("aten::items.str", kNative)
      .run();
}

// A key that is absent: get() gives None / the default, `in` is false.
TEST(NativeDicts, IntKeysMissing) {
  OpTester(R"IR(
graph(%x : Tensor, %k : int):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %d : Dict(int, Tensor) = prim::DictConstruct(%one, %x, %two, %x)
  %get : Tensor? = aten::get(%d, %k)
  %getd : Tensor = aten::get(%d, %k, %x)
  %has : bool = aten::__contains__(%d, %k)
  %n : int = aten::len(%d)
  %ks : int[] = aten::keys(%d)
  %it : (int, Tensor)[] = aten::items(%d)
  %r : (Tensor?, Tensor, bool, int, int[], (int, Tensor)[]) = prim::TupleConstruct(%get, %getd, %has, %n, %ks, %it)
  return (%r))IR")
      .inputs({at::randn({2}), int64_t{2}})
      .inputs({at::randn({3}), int64_t{7}})
      .expectKernel("aten::get.int", kNative)
      .expectKernel("aten::get.default_int", kNative)
      .expectKernel("aten::__contains__.int", kNative)
      .expectKernel("aten::len.Dict_int", kNative)
      .expectKernel("aten::keys.int", kNative)
      .expectKernel("aten::items.int", kNative)
      .run();
}

// Tensor keys hash by identity, as in the interpreter.
TEST(NativeDicts, TensorKeys) {
  OpTester(R"IR(
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %d : Dict(Tensor, int) = prim::DictConstruct(%x, %one)
  aten::_set_item(%d, %y, %one)
  %g : int = aten::__getitem__(%d, %x)
  %has : bool = aten::__contains__(%d, %y)
  %n : int = aten::len(%d)
  %vs : int[] = aten::values(%d)
  %r : (int, bool, int, int[]) = prim::TupleConstruct(%g, %has, %n, %vs)
  return (%r))IR")
      .inputs({at::randn({2}), at::randn({2})})
      .inputs({at::randn({3}), at::randn({1})})
      .expectKernel("aten::_set_item.Tensor", kNative)
      .expectKernel("aten::__getitem__.Dict_Tensor", kNative)
      .expectKernel("aten::__contains__.Tensor", kNative)
      .expectKernel("aten::len.Dict_Tensor", kNative)
      .expectKernel("aten::values.Tensor", kNative)
      .run();
}

TEST(NativeDicts, MissingKeyRaisesKeyError) {
  auto m = Module::fromIR(R"IR(
graph(%x : Tensor, %k : str):
  %a : str = prim::Constant[value="a"]()
  %d : Dict(str, Tensor) = prim::DictConstruct(%a, %x)
  %g : Tensor = aten::__getitem__(%d, %k)
  return (%g))IR");
  auto rt = m->createRuntime();
  EXPECT_TRUE(rt->run({at::ones({2}), c10::IValue("a")}).toTensor().equal(at::ones({2})));
  try {
    rt->run({at::ones({2}), c10::IValue("zz")});
    FAIL() << "no error for a missing key";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("KeyError"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace brisk::testing
