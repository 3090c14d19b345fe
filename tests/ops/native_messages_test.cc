// ops_cpu native kernels aten::format and aten::warn (ops_cpu/native/messages.cc).
#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kNative = KernelKind::kNative;

TEST(NativeMessages, FormatMatchesInterpreter) {
  OpTester(R"IR(
graph(%i : int, %f : float, %s : str, %l : int[]):
  %fmt : str = prim::Constant[value="i={} f={}, s='{}' l={} {x} {"]()
  %r : str = aten::format(%fmt, %i, %f, %s, %l)
  return (%r))IR")
      .inputs({int64_t{3}, 2.5, std::string("abc"), c10::List<int64_t>({1, 2})})
      .inputs({int64_t{-12345}, 1e-7, std::string("longer string"), c10::List<int64_t>({4, 5, 6, 7})})
      .expectKernel("aten::format", kNative)
      .run();
}

// Extra arguments are ignored; too few is the interpreter's error.
TEST(NativeMessages, FormatArgumentCount) {
  OpTester(R"IR(
graph(%i : int, %j : int):
  %fmt : str = prim::Constant[value="only {}"]()
  %r : str = aten::format(%fmt, %i, %j)
  return (%r))IR")
      .inputs({int64_t{1}, int64_t{2}})
      .inputs({int64_t{30}, int64_t{40}})
      .expectKernel("aten::format", kNative)
      .run();
  auto m = Module::fromIR(R"IR(
graph(%i : int):
  %fmt : str = prim::Constant[value="{} and {}"]()
  %r : str = aten::format(%fmt, %i)
  return (%r))IR");
  auto rt = m->createRuntime();
  try {
    rt->run({int64_t{1}});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("Too few arguments for format string: {} and {}"), std::string::npos)
        << e.what();
  }
}

class CountingHandler : public c10::WarningHandler {
 public:
  void process(const c10::Warning& w) override { messages.push_back(w.msg()); }
  std::vector<std::string> messages;
};

const char* kWarnIR = R"IR(
graph(%a : Tensor, %msg : str):
  %lvl : int = prim::Constant[value=2]()
  aten::warn(%msg, %lvl)
  %c : Tensor = aten::relu(%a)
  return (%c))IR";

// The interpreter runs warn as an instruction (its registered operator only throws, so
// the fallback kernel cannot serve it): brisk's native kernel warns once per node, like
// the interpreter, and the rest of the graph runs. (Not compared with the interpreter
// here: for IR without source locations, the interpreter's WARN instruction reads the
// stack level as the message and asserts, in torch 2.14 as in 1.13.)
TEST(NativeMessages, WarnOncePerNode) {
  CountingHandler handler;
  c10::WarningUtils::WarningHandlerGuard guard(&handler);
  auto m = Module::fromIR(kWarnIR);
  bool found = false;
  for (const NodeKernelInfo& info : m->kernelReport()) {
    if (info.op != "aten::warn") continue;
    found = true;
    EXPECT_EQ(info.kind, kNative) << info.provider << " " << info.detail;
  }
  EXPECT_TRUE(found);
  auto rt = m->createRuntime();
  for (int64_t n : {2, 9, 4}) {
    at::Tensor a = at::randn({n});
    c10::IValue out = rt->run({a, std::string("first message")});
    EXPECT_TRUE(at::equal(out.toTensor(), at::relu(a)));
  }
  auto rt2 = m->createRuntime();
  rt2->run({at::randn({2}), std::string("second message")});
  ASSERT_EQ(handler.messages.size(), 1u);
  EXPECT_EQ(handler.messages[0], "first message");
}

}  // namespace
}  // namespace brisk::testing
