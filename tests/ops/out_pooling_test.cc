// Out-variant kernels of ops_cpu/out_variant/pooling.cc against the interpreter, including the
// output layout (channels-last in -> channels-last out, as the functional op does).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/irparser.h>

#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/executor/module.h"
#include "core/executor/runtime.h"
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

// max_pool2d IR with constant arguments; an empty `stride` is written as [] (ATen:
// stride = kernel size).
std::string maxPoolIR(const std::vector<int64_t>& k, const std::vector<int64_t>& s, const std::vector<int64_t>& p,
                      const std::vector<int64_t>& d, bool ceil_mode) {
  auto list = [](const std::vector<int64_t>& v) {
    std::string r;
    for (int64_t x : v) r += (r.empty() ? "" : ", ") + std::to_string(x);
    return "[" + r + "]";
  };
  const std::string stride = s.empty() ? "prim::ListConstruct()" : "prim::Constant[value=" + list(s) + "]()";
  return "graph(%x : Tensor):\n"
         "  %k : int[] = prim::Constant[value=" + list(k) + "]()\n"
         "  %s : int[] = " + stride + "\n"
         "  %p : int[] = prim::Constant[value=" + list(p) + "]()\n"
         "  %d : int[] = prim::Constant[value=" + list(d) + "]()\n"
         "  %c : bool = prim::Constant[value=" + std::string(ceil_mode ? "1" : "0") + "]()\n"
         "  %y : Tensor = aten::max_pool2d(%x, %k, %s, %p, %d, %c)\n"
         "  return (%y)\n";
}

// Two shapes, each run twice per round by the tester (the retained output is reused,
// grown and shrunk).
void expectMaxPoolMatches(const std::string& ir, at::Tensor a, at::Tensor b) {
  OpTester(ir).inputs({std::move(a)}).inputs({std::move(b)}).expectKernel("aten::max_pool2d", kOut).run();
}

// The bits of brisk's result equal ATen's (not just allclose): the sign of a zero
// maximum and the payload of a NaN maximum included. ATen picks the first maximal
// element of a window in row-major order, or its last NaN.
void expectBitIdentical(const std::string& ir, const std::vector<at::Tensor>& xs, const std::vector<int64_t>& k,
                        const std::vector<int64_t>& s, const std::vector<int64_t>& p, const std::vector<int64_t>& d,
                        bool ceil_mode) {
  for (const at::Tensor& x : xs) {
    // A Module fixes its input's rank and dtype on the first run: one per input.
    auto rt = Module::fromIR(ir, Options{}, "bits")->createRuntime();
    const at::Tensor expected = at::max_pool2d(x, k, s, p, d, ceil_mode);
    for (int rep = 0; rep < 2; ++rep) {
      const at::Tensor actual = rt->run({x}).toTensor();
      ASSERT_EQ(actual.sizes(), expected.sizes());
      ASSERT_EQ(actual.strides(), expected.strides());
      ASSERT_EQ(actual.scalar_type(), expected.scalar_type());
      EXPECT_EQ(std::memcmp(actual.data_ptr(), expected.data_ptr(), expected.nbytes()), 0)
          << "rep " << rep << " sizes " << x.sizes();
    }
  }
}

// Random values with many ties (small integers), zeros of both signs, +-inf and NaNs
// with distinct payloads and signs.
template <class T>
at::Tensor specialValues(at::IntArrayRef shape, uint64_t seed) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  at::Tensor x = at::empty(shape, at::TensorOptions().dtype(sizeof(T) == 4 ? at::kFloat : at::kDouble));
  T* data = x.data_ptr<T>();
  uint64_t state = seed;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  for (int64_t i = 0; i < x.numel(); ++i) {
    const uint32_t r = next() % 100;
    if (r < 10) {
      data[i] = -0.0;
    } else if (r < 20) {
      data[i] = 0.0;
    } else if (r < 24) {
      data[i] = -std::numeric_limits<T>::infinity();
    } else if (r < 25) {
      data[i] = std::numeric_limits<T>::infinity();
    } else if (r < 27) {
      T nan = std::numeric_limits<T>::quiet_NaN();
      Bits bits;
      std::memcpy(&bits, &nan, sizeof bits);
      bits |= 1 + next() % 1000;
      if (next() % 2) bits |= Bits{1} << (8 * sizeof(T) - 1);
      std::memcpy(&data[i], &bits, sizeof bits);
    } else {
      data[i] = static_cast<T>(static_cast<int>(next() % 7) - 5);
    }
  }
  return x;
}

TEST(OutPooling, MaxPool2d) {
  OpTester(kMaxPoolIR)
      .inputs({at::randn({1, 3, 8, 8})})
      .inputs({at::randn({2, 5, 17, 12})})
      .expectKernel("aten::max_pool2d", kOut)
      .run();
}

// ResNet's stem pooling (kernel 3, stride 2, padding 1) at ResNet's size and others.
TEST(OutPooling, MaxPool2dResNetStem) {
  expectMaxPoolMatches(maxPoolIR({3, 3}, {2, 2}, {1, 1}, {1, 1}, false), at::randn({1, 64, 112, 112}),
                       at::randn({2, 8, 57, 33}));
}

TEST(OutPooling, MaxPool2dKernel2Stride2) {
  expectMaxPoolMatches(maxPoolIR({2, 2}, {2, 2}, {0, 0}, {1, 1}, false), at::randn({1, 16, 32, 32}),
                       at::randn({3, 4, 9, 15}));
  expectMaxPoolMatches(maxPoolIR({2}, {}, {0}, {1}, false), at::randn({2, 3, 10, 10}), at::randn({1, 2, 7, 5}));
}

TEST(OutPooling, MaxPool2dCeilModeOddSizes) {
  expectMaxPoolMatches(maxPoolIR({3, 3}, {2, 2}, {0, 0}, {1, 1}, true), at::randn({1, 4, 13, 11}),
                       at::randn({2, 3, 7, 9}));
  // The last window starts in the right padding: ATen drops it only when it starts
  // past the padding; with padding 1 a window may begin on the last column.
  expectMaxPoolMatches(maxPoolIR({2, 2}, {2, 2}, {1, 1}, {1, 1}, true), at::randn({1, 3, 5, 7}),
                       at::randn({2, 2, 8, 6}));
  expectMaxPoolMatches(maxPoolIR({3, 3}, {3, 3}, {1, 1}, {1, 1}, true), at::randn({1, 2, 10, 11}),
                       at::randn({1, 3, 4, 5}));
}

TEST(OutPooling, MaxPool2dDilation) {
  expectMaxPoolMatches(maxPoolIR({3, 3}, {1, 1}, {1, 1}, {2, 2}, false), at::randn({1, 4, 12, 40}),
                       at::randn({2, 3, 9, 7}));
  expectMaxPoolMatches(maxPoolIR({2, 3}, {2, 1}, {1, 1}, {3, 2}, true), at::randn({1, 2, 11, 25}),
                       at::randn({2, 2, 8, 9}));
}

TEST(OutPooling, MaxPool2dNonSquare) {
  expectMaxPoolMatches(maxPoolIR({3, 5}, {1, 2}, {1, 2}, {1, 1}, false), at::randn({1, 3, 9, 35}),
                       at::randn({2, 4, 6, 17}));
  expectMaxPoolMatches(maxPoolIR({4, 2}, {3, 1}, {2, 0}, {1, 1}, false), at::randn({1, 3, 14, 20}),
                       at::randn({1, 2, 5, 3}));
  expectMaxPoolMatches(maxPoolIR({1, 3}, {1, 3}, {0, 1}, {1, 1}, true), at::randn({2, 3, 4, 31}),
                       at::randn({1, 1, 2, 2}));
}

TEST(OutPooling, MaxPool2dDouble) {
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  expectMaxPoolMatches(kMaxPoolIR, at::randn({1, 3, 20, 21}, f64), at::randn({2, 5, 17, 12}, f64));
  expectMaxPoolMatches(maxPoolIR({2, 2}, {2, 2}, {0, 0}, {1, 1}, true), at::randn({1, 3, 9, 33}, f64),
                       at::randn({3, 2, 5, 4}, f64));
}

TEST(OutPooling, MaxPool2dNaNAndInf) {
  at::Tensor a = at::randn({1, 3, 16, 20});
  a.index_put_({0, 0, 3, 4}, std::numeric_limits<float>::quiet_NaN());
  a.index_put_({0, 1, 0, 0}, std::numeric_limits<float>::quiet_NaN());
  a.index_put_({0, 2, 15, 19}, std::numeric_limits<float>::quiet_NaN());
  a.index_put_({0, 1, 7}, -std::numeric_limits<float>::infinity());  // a whole row
  at::Tensor b = at::full({2, 2, 9, 9}, -std::numeric_limits<float>::infinity());
  b.index_put_({1, 1, 4, 4}, std::numeric_limits<float>::quiet_NaN());
  expectMaxPoolMatches(kMaxPoolIR, a, b);
  expectMaxPoolMatches(maxPoolIR({2, 2}, {1, 1}, {0, 0}, {1, 1}, false), a, b);
}

// 1x1 outputs: the whole input in one window, and a window clipped by padding.
TEST(OutPooling, MaxPool2dOutput1x1) {
  expectMaxPoolMatches(maxPoolIR({7, 7}, {1, 1}, {0, 0}, {1, 1}, false), at::randn({2, 8, 7, 7}),
                       at::randn({1, 3, 7, 7}));
  expectMaxPoolMatches(maxPoolIR({3, 3}, {2, 2}, {1, 1}, {1, 1}, false), at::randn({1, 4, 1, 1}),
                       at::randn({3, 2, 2, 2}));
}

// Arguments for the bit-for-bit tests: clipped windows, ceil mode, strides, dilation,
// non-square kernels, 1x1.
struct BitCase {
  std::vector<int64_t> k, s, p, d;
  bool ceil_mode;
};
const BitCase kBitCases[] = {
    {{3, 3}, {2, 2}, {1, 1}, {1, 1}, false}, {{2, 2}, {2, 2}, {0, 0}, {1, 1}, true},
    {{3, 2}, {1, 1}, {1, 1}, {1, 1}, false}, {{3, 3}, {1, 2}, {1, 0}, {2, 3}, true},
    {{5, 4}, {3, 4}, {2, 2}, {1, 1}, true},  {{1, 1}, {2, 1}, {0, 0}, {1, 1}, false},
};

TEST(OutPooling, MaxPool2dBitIdenticalToATen) {
  uint64_t seed = 1;
  for (const BitCase& c : kBitCases) {
    SCOPED_TRACE(maxPoolIR(c.k, c.s, c.p, c.d, c.ceil_mode));
    expectBitIdentical(maxPoolIR(c.k, c.s, c.p, c.d, c.ceil_mode),
                       {specialValues<float>({2, 3, 19, 45}, seed++), specialValues<float>({4, 23, 17}, seed++),
                        specialValues<double>({1, 2, 21, 30}, seed++)},
                       c.k, c.s, c.p, c.d, c.ceil_mode);
  }
}

// With intra-op threads the planes are split across threads: same bits.
TEST(OutPooling, MaxPool2dThreaded) {
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  expectBitIdentical(kMaxPoolIR, {specialValues<float>({2, 16, 40, 40}, 7), specialValues<float>({3, 50, 31}, 8)},
                     {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
  at::set_num_threads(threads);
}

// Channels-last float inputs run brisk's NHWC kernel (no indices): ATen's bits and
// strides, with channel counts that exercise the 32-channel blocks, the 8-channel
// blocks and the scalar tail.
TEST(OutPooling, MaxPool2dChannelsLastBitIdenticalToATen) {
  const auto cl = at::MemoryFormat::ChannelsLast;
  uint64_t seed = 100;
  for (const BitCase& c : kBitCases) {
    SCOPED_TRACE(maxPoolIR(c.k, c.s, c.p, c.d, c.ceil_mode));
    std::vector<at::Tensor> xs;
    for (int64_t ch : {3, 8, 13, 40, 67})
      xs.push_back(specialValues<float>({2, ch, 11, 14}, seed++).contiguous(cl));
    expectBitIdentical(maxPoolIR(c.k, c.s, c.p, c.d, c.ceil_mode), xs, c.k, c.s, c.p, c.d, c.ceil_mode);
  }
  // ResNet's stem pool as it runs behind a channels-last convolution, and with threads.
  expectBitIdentical(kMaxPoolIR, {specialValues<float>({2, 64, 30, 30}, 9).contiguous(cl)}, {3, 3}, {2, 2}, {1, 1},
                     {1, 1}, false);
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  expectBitIdentical(kMaxPoolIR, {specialValues<float>({3, 40, 33, 31}, 10).contiguous(cl)}, {3, 3}, {2, 2},
                     {1, 1}, {1, 1}, false);
  at::set_num_threads(threads);
}

// Argument errors are ATen's own: the kernel leaves every input ATen would reject to
// ATen.
TEST(OutPooling, MaxPool2dErrors) {
  struct Bad {
    std::vector<int64_t> k, s, p, d;
    at::Tensor x;
  };
  const Bad bad[] = {
      {{3, 3}, {2, 2}, {2, 2}, {1, 1}, at::randn({1, 2, 8, 8})},     // padding > kernel / 2
      {{0, 3}, {2, 2}, {0, 0}, {1, 1}, at::randn({1, 2, 8, 8})},     // kernel 0
      {{3, 3}, {0, 2}, {0, 0}, {1, 1}, at::randn({1, 2, 8, 8})},     // stride 0
      {{3, 3}, {1, 1}, {0, 0}, {0, 1}, at::randn({1, 2, 8, 8})},     // dilation 0
      {{5, 5}, {1, 1}, {0, 0}, {1, 1}, at::randn({1, 2, 4, 8})},     // output smaller than 1x1
      {{2, 2}, {2, 2}, {0, 0}, {1, 1}, at::randn({1, 0, 4, 4})},     // no channels
      {{2, 2, 2}, {2, 2}, {0, 0}, {1, 1}, at::randn({1, 2, 4, 4})},  // three kernel sizes
  };
  for (const Bad& b : bad) {
    const std::string ir = maxPoolIR(b.k, b.s, b.p, b.d, false);
    std::string aten_msg;
    try {
      at::max_pool2d(b.x, b.k, b.s, b.p, b.d, false);
    } catch (const c10::Error& e) {
      aten_msg = e.what_without_backtrace();
    }
    ASSERT_FALSE(aten_msg.empty()) << ir;
    aten_msg = aten_msg.substr(0, std::min<size_t>(aten_msg.find('\n'), 60));
    std::string brisk_msg;
    try {
      Module::fromIR(ir, Options{}, "errors")->run({b.x});
    } catch (const std::exception& e) {
      brisk_msg = e.what();
    }
    EXPECT_NE(brisk_msg.find(aten_msg), std::string::npos) << "brisk: " << brisk_msg << "\nATen: " << aten_msg;
  }
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
  // One channel (NCHW and NHWC strides coincide but for dim 1) and 1x1 planes (a
  // tensor that is both contiguous and channels-last): the output's strides follow
  // ATen's suggest_memory_format either way.
  const auto cl = at::MemoryFormat::ChannelsLast;
  expectSameLayout(kMaxPoolIR, {at::randn({2, 1, 9, 9}), at::randn({2, 1, 9, 9}).contiguous(cl),
                                at::randn({2, 3, 1, 1}), at::randn({2, 3, 1, 1}).contiguous(cl)});
}

TEST(OutPooling, MaxPool2dUnbatched) {
  OpTester(kMaxPoolIR)
      .inputs({at::randn({3, 8, 8})})
      .inputs({at::randn({5, 17, 12})})
      .expectKernel("aten::max_pool2d", kOut)
      .run();
  const std::string ir = maxPoolIR({2, 3}, {2, 1}, {1, 0}, {1, 2}, true);
  expectMaxPoolMatches(ir, at::randn({1, 9, 10}), at::randn({4, 6, 31}));
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  expectMaxPoolMatches(ir, at::randn({2, 5, 13}, f64), at::randn({3, 6, 31}, f64));
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
      // brisk's own NHWC kernel: 32- and 8-channel vectors and a scalar tail (45), a
      // few channels only (3), MobileNetV2's head, a 1x1 plane.
      .inputs({at::randn({2, 45, 3, 4}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({2, 3, 6, 5}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({2, 1280, 7, 7}).contiguous(at::MemoryFormat::ChannelsLast)})
      .inputs({at::randn({2, 40, 1, 1}).contiguous(at::MemoryFormat::ChannelsLast)})
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

// max_pool2d_with_indices (core ATen IR): with the indices read, ATen's kernel computes
// both; without, only the values (the direct NCHW kernel where it applies).
TEST(OutPooling, MaxPool2dWithIndices) {
  for (const char* returned : {"%both", "%y"}) {
    SCOPED_TRACE(returned);
    const std::string ir = std::string(
                               "graph(%x : Tensor):\n"
                               "  %k : int[] = prim::Constant[value=[3, 3]]()\n"
                               "  %s : int[] = prim::Constant[value=[2, 2]]()\n"
                               "  %p : int[] = prim::Constant[value=[1, 1]]()\n"
                               "  %d : int[] = prim::Constant[value=[1, 1]]()\n"
                               "  %c : bool = prim::Constant[value=0]()\n"
                               "  %y : Tensor, %i : Tensor = aten::max_pool2d_with_indices(%x, %k, %s, %p, %d, %c)\n"
                               "  %both : (Tensor, Tensor) = prim::TupleConstruct(%y, %i)\n"
                               "  return (") +
                           returned + ")\n";
    OpTester(ir)
        .inputs({at::randn({1, 3, 8, 8})})
        .inputs({at::randn({2, 5, 13, 11})})
        .inputs({at::randn({2, 5, 13, 11}).contiguous(at::MemoryFormat::ChannelsLast)})
        .tolerance(Tolerance{0, 0, 0})
        .expectKernel("aten::max_pool2d_with_indices", kOut)
        .run();
    OpTester(ir)  // unbatched
        .inputs({at::randn({4, 9, 7})})
        .inputs({at::randn({2, 6, 6})})
        .tolerance(Tolerance{0, 0, 0})
        .expectKernel("aten::max_pool2d_with_indices", kOut)
        .run();
  }
}

}  // namespace
}  // namespace brisk::testing
