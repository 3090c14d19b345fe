// The ops_quantized plugin (Options::precision): linear layers on fp16 weights and on
// dynamic int8, against what each mode promises -- fp16: exactly fp32 arithmetic on
// weights rounded to fp16; int8: libtorch's own quantized::linear_dynamic on the same
// int8 weights, bit for bit -- and against fp32 within the error the README states.
// With no precision asked for, the plugin changes nothing.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/executor/module.h"
#include "tests/ops/op_tester.h"
#include "tests/testing/model_check.h"

namespace fbgemm {
bool fbgemmHasAvx512VnniSupport();  // exported by libtorch_cpu (fbgemm/Utils.h)
}

namespace brisk::testing {
namespace {

constexpr int64_t kOut = 48, kIn = 40;

// The weights constTensorIR builds (sin of 0, 1, 2, ... in the given shape).
at::Tensor constTensor(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return at::sin(at::arange(n, at::kFloat).reshape(shape));
}

const std::string kLinearIR = "graph(%x : Tensor):\n" + constTensorIR("w", {kOut, kIn}) + constTensorIR("b", {kOut}) +
                              "  %out : Tensor = aten::linear(%x, %w, %b)\n  return (%out)\n";
// The core ATen IR's spelling: addmm(b, x, W^T) and mm(x, W^T).
const std::string kAddmmIR = "graph(%x : Tensor):\n" + constTensorIR("wt", {kIn, kOut}) + constTensorIR("b", {kOut}) +
                             "  %one : int = prim::Constant[value=1]()\n"
                             "  %out : Tensor = aten::addmm(%b, %x, %wt, %one, %one)\n  return (%out)\n";
const std::string kMmIR = "graph(%x : Tensor):\n" + constTensorIR("wt", {kIn, kOut}) +
                          "  %y : Tensor = aten::mm(%x, %wt)\n  %out : Tensor = aten::relu(%y)\n  return (%out)\n";

std::shared_ptr<Module> load(const std::string& ir, std::vector<std::string> precision, const std::string& name) {
  Options o;
  o.precision = std::move(precision);
  o.strict_inputs = false;
  return Module::fromIR(ir, o, name);
}

// Runs `m` on x twice (the second run reuses the retained output) and checks x is
// left as it was.
at::Tensor runTwice(Module& m, const at::Tensor& x) {
  const at::Tensor before = x.clone();
  at::Tensor first = m.run({x}).toTensor().clone();
  at::Tensor second = m.run({x}).toTensor();
  EXPECT_TRUE(at::equal(first, second));
  EXPECT_TRUE(at::equal(x, before)) << "the input changed";
  return second;
}

// libtorch's own dynamic int8 op `op` (quantized::linear_dynamic or
// quantized::linear_relu_dynamic) on x, with the test layer's weights quantized as the
// plugin does (per channel, symmetric, scale max |w| / 127) and the plugin's activation
// range (8 bits with fbgemm's VNNI kernels, else 7).
at::Tensor libtorchInt8(const char* op, const at::Tensor& x) {
  const at::Tensor w = constTensor({kOut, kIn}), b = constTensor({kOut});
  const at::Tensor scales = (w.abs().amax(1) / 127.0).clamp_min(1e-12).to(at::kDouble);
  const at::Tensor wq = at::quantize_per_channel(w, scales, at::zeros({kOut}, at::kLong), 0, at::kQInt8);
  auto& d = c10::Dispatcher::singleton();
  torch::jit::Stack s{wq, b};
  d.findSchemaOrThrow("quantized::linear_prepack", "").callBoxed(s);
  const bool reduce_range = !fbgemm::fbgemmHasAvx512VnniSupport();
  torch::jit::Stack st{x.reshape({-1, kIn}), s.at(0), reduce_range};
  d.findSchemaOrThrow(op, "").callBoxed(st);
  return st.at(0).toTensor().reshape(at::linear(x, w, b).sizes());
}

std::vector<at::Tensor> shapes() { return {at::randn({16, kIn}), at::randn({3, 7, kIn}), at::randn({1, kIn})}; }

TEST(QuantizedLinear, NoPrecisionChangesNothing) {
  Options plain, with_plugin;
  plain.strict_inputs = with_plugin.strict_inputs = false;
  with_plugin.plugins = {"ops_cpu", "ops_quantized"};
  auto a = Module::fromIR(kLinearIR, plain, "fp32");
  auto b = Module::fromIR(kLinearIR, with_plugin, "fp32-with-plugin");
  EXPECT_FALSE(kernelInfo(*b, "ops_quantized::linear_fp16"));
  EXPECT_FALSE(kernelInfo(*b, "ops_quantized::linear_int8_dynamic"));
  for (const at::Tensor& x : shapes()) EXPECT_TRUE(bitEqual(a->run({x}).toTensor(), b->run({x}).toTensor()));
}

// fp16 weights: fbgemm's GEMM is fp32 arithmetic on the fp16-rounded weights, so it
// matches ATen's linear on W.half().float() up to fp32 summation order.
TEST(QuantizedLinear, Fp16WeightsAreFp32ArithmeticOnRoundedWeights) {
  const at::Tensor w = constTensor({kOut, kIn}), b = constTensor({kOut});
  const at::Tensor w16 = w.to(at::kHalf).to(at::kFloat);
  struct Case {
    const char* name;
    const std::string* ir;
    at::Tensor w, b;
    bool relu;
  };
  const Case cases[] = {{"linear", &kLinearIR, w16, b, false},
                        {"addmm", &kAddmmIR, constTensor({kIn, kOut}).t().to(at::kHalf).to(at::kFloat), b, false},
                        {"mm", &kMmIR, constTensor({kIn, kOut}).t().to(at::kHalf).to(at::kFloat), at::Tensor(), true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto m = load(*c.ir, {"fp16_weights"}, std::string("fp16-") + c.name);
    const std::optional<NodeKernelInfo> k = kernelInfo(*m, "ops_quantized::linear_fp16");
    ASSERT_TRUE(k);
    EXPECT_EQ(k->kind, KernelKind::kOutVariant);
    EXPECT_EQ(k->provider, "ops_quantized");
    for (const at::Tensor& x : shapes()) {
      if (c.ir != &kLinearIR && x.dim() != 2) continue;  // addmm / mm take matrices
      at::Tensor want = at::linear(x, c.w, c.b.defined() ? c10::optional<at::Tensor>(c.b) : c10::nullopt);
      if (c.relu) want = at::relu(want);
      const at::Tensor got = runTwice(*m, x);
      ASSERT_EQ(got.sizes(), want.sizes());
      EXPECT_TRUE(at::allclose(got, want, 1e-5, 1e-5 * want.abs().max().item<double>())) << (got - want).abs().max();
    }
  }
}

// The most int8 dynamic quantization can move output j of x W^T from the fp32 result: each
// product x_k w_jk is off by at most |w_jk| s_x / 2 + |x_k| s_wj / 2 + s_x s_wj / 4 (the
// two rounding errors and their product), with s_x the activation step (range over 255,
// or 127 with 7 bits) and s_wj = max_k |w_jk| / 127. A bound that holds for every input,
// unlike a fraction of the output's range (one row of random input exceeds 2% of its
// range about once in 200 draws), and still far below what a wrong scale, zero point or
// packing would give.
at::Tensor int8ErrorBound(const at::Tensor& x, const at::Tensor& w, bool reduce_range) {
  const at::Tensor rows = x.reshape({-1, x.size(-1)});
  const at::Tensor lo = rows.amin(1, true).clamp_max(0), hi = rows.amax(1, true).clamp_min(0);
  const at::Tensor sx = (hi - lo) / (reduce_range ? 127.0 : 255.0);    // [rows, 1]
  const at::Tensor sw = w.abs().amax(1) / 127.0;                       // [out]
  const at::Tensor bound = 0.5 * sx * w.abs().sum(1) + 0.5 * rows.abs().sum(1, true) * sw +
                           0.25 * w.size(1) * sx * sw;                 // [rows, out]
  return (bound * 1.01 + 1e-5).reshape(at::linear(x, w).sizes());    // fp32 summation slack
}

// int8 dynamic: libtorch's quantized::linear_dynamic on the same int8 weights (per
// channel, symmetric, scale max |w| / 127) and the same activation range (8 bits with
// fbgemm's VNNI kernels, else 7) gives the same bits, within int8ErrorBound of fp32. The
// last input is the worst case for saturation: every activation at the top of its range
// against weights of one sign.
TEST(QuantizedLinear, Int8DynamicIsLibtorchsDynamicLinear) {
  const at::Tensor w = constTensor({kOut, kIn}), b = constTensor({kOut});
  auto m = load(kLinearIR, {"int8_dynamic"}, "int8");
  const std::optional<NodeKernelInfo> k = kernelInfo(*m, "ops_quantized::linear_int8_dynamic");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->provider, "ops_quantized");
  std::vector<at::Tensor> inputs = shapes();
  inputs.push_back(at::full({4, kIn}, 3.0f) * at::sign(w.select(0, 0)));
  const bool reduce_range = !fbgemm::fbgemmHasAvx512VnniSupport();
  for (const at::Tensor& x : inputs) {
    SCOPED_TRACE(x.sizes());
    const at::Tensor want = libtorchInt8("quantized::linear_dynamic", x);
    const at::Tensor got = runTwice(*m, x);
    EXPECT_TRUE(bitEqual(got, want));
    const at::Tensor error = (got - at::linear(x, w, b)).abs(), bound = int8ErrorBound(x, w, reduce_range);
    EXPECT_TRUE(at::all(error <= bound).item<bool>()) << "worst excess " << (error - bound).max().item<double>();
  }
}

// An input spanning less than fbgemm's smallest activation scale allows (6.1e-5 x 255)
// would quantize to zero there, and the layer would return its bias alone: the plugin runs
// those inputs in fp32. A layer without bias (mm + relu) shows it.
TEST(QuantizedLinear, Int8DynamicTinyInputsAreNotRoundedToZero) {
  const at::Tensor wt = constTensor({kIn, kOut});
  auto m = load(kMmIR, {"int8_dynamic"}, "int8_tiny");
  ASSERT_TRUE(kernelInfo(*m, "ops_quantized::linear_int8_dynamic_relu"));
  for (const at::Tensor& x : {at::randn({16, kIn}) * 1e-6, at::rand({3, kIn}) * 1e-3}) {
    const at::Tensor exact = at::relu(at::mm(x, wt));
    const at::Tensor got = runTwice(*m, x);
    ASSERT_GT(exact.max().item<double>(), 0.0);
    EXPECT_LE((got - exact).abs().max().item<double>(), 1e-3 * exact.max().item<double>());
  }
  // A normal range still takes the int8 kernel's arithmetic, not fp32's.
  const at::Tensor x = at::randn({16, kIn});
  EXPECT_FALSE(at::equal(runTwice(*m, x), at::relu(at::mm(x, wt))));
}

// A relu that alone reads an int8 layer's result joins it: libtorch's
// quantized::linear_relu_dynamic on the same int8 weights, bit for bit. A relu that
// shares the result with another reader stays apart.
TEST(QuantizedLinear, Int8DynamicTakesTheReluThatAloneReadsIt) {
  for (const char* relu : {"aten::relu", "aten::relu_"}) {
    SCOPED_TRACE(relu);
    const std::string ir = "graph(%x : Tensor):\n" + constTensorIR("w", {kOut, kIn}) + constTensorIR("b", {kOut}) +
                           "  %y : Tensor = aten::linear(%x, %w, %b)\n  %out : Tensor = " + relu +
                           "(%y)\n  return (%out)\n";
    auto m = load(ir, {"int8_dynamic"}, "int8-relu");
    ASSERT_TRUE(kernelInfo(*m, "ops_quantized::linear_int8_dynamic_relu"));
    EXPECT_FALSE(kernelInfo(*m, "ops_quantized::linear_int8_dynamic"));
    EXPECT_FALSE(kernelInfo(*m, relu));
    for (const at::Tensor& x : shapes())
      EXPECT_TRUE(bitEqual(runTwice(*m, x), libtorchInt8("quantized::linear_relu_dynamic", x)));
  }
  const std::string shared = "graph(%x : Tensor):\n" + constTensorIR("w", {kOut, kIn}) + constTensorIR("b", {kOut}) +
                             "  %y : Tensor = aten::linear(%x, %w, %b)\n  %r : Tensor = aten::relu(%y)\n"
                             "  %out : (Tensor, Tensor) = prim::TupleConstruct(%r, %y)\n  return (%out)\n";
  auto m = load(shared, {"int8_dynamic"}, "int8-shared");
  EXPECT_TRUE(kernelInfo(*m, "ops_quantized::linear_int8_dynamic"));
  EXPECT_FALSE(kernelInfo(*m, "ops_quantized::linear_int8_dynamic_relu"));
  const at::Tensor x = at::randn({5, kIn});
  const auto out = m->run({x}).toTuple()->elements();
  EXPECT_TRUE(at::equal(out[0].toTensor(), at::relu(out[1].toTensor())));
}

// Listed first, a mode takes the layer; an input that is not fp32 runs ATen's linear on
// the fp32 weight (the same error as the unquantized model).
TEST(QuantizedLinear, FirstListedModeWinsAndOtherDtypesAreATensLinear) {
  auto a = load(kLinearIR, {"int8_dynamic", "fp16_weights"}, "both");
  EXPECT_TRUE(kernelInfo(*a, "ops_quantized::linear_int8_dynamic"));
  EXPECT_FALSE(kernelInfo(*a, "ops_quantized::linear_fp16"));
  auto m = load(kLinearIR, {"fp16_weights"}, "fp16-double");
  const at::Tensor x = at::randn({4, kIn}, at::kDouble);
  const std::string msg = errorOf([&] { m->run({x}); });
  std::string want;
  try {
    at::linear(x, constTensor({kOut, kIn}), constTensor({kOut}));
  } catch (const c10::Error& e) {
    want = e.what_without_backtrace();
  }
  ASSERT_FALSE(want.empty());
  EXPECT_NE(msg.find(want.substr(0, want.find('\n'))), std::string::npos) << msg;
}

// The rewritten nodes run only on this plugin's kernels: with every node on the
// TorchScript operator, or that kernel kind off, the layers stay fp32.
TEST(QuantizedLinear, KernelKindsOffKeepTheLayersFp32) {
  const at::Tensor x = at::randn({4, kIn});
  const at::Tensor want = at::linear(x, constTensor({kOut, kIn}), constTensor({kOut}));
  for (int variant = 0; variant < 3; ++variant) {
    Options o;
    o.strict_inputs = false;
    o.precision = {variant == 1 ? "int8_dynamic" : "fp16_weights"};
    o.fallback_only = variant == 0;
    o.use_native = variant != 1;
    o.use_out_variants = variant != 2;
    auto m = Module::fromIR(kLinearIR, o, "kinds-off");
    EXPECT_FALSE(kernelInfo(*m, "ops_quantized::linear_fp16")) << variant;
    EXPECT_FALSE(kernelInfo(*m, "ops_quantized::linear_int8_dynamic")) << variant;
    EXPECT_TRUE(at::allclose(m->run({x}).toTensor(), want, 1e-5, 1e-5)) << variant;
  }
}

// bf16 is the onednn delegate's mode: this plugin rewrites nothing for it. Listed before a
// linear mode it keeps the linear layers for the delegate; listed after, it leaves them
// to that mode.
TEST(QuantizedLinear, Bf16TakesTheLinearLayersOnlyWhenListedFirst) {
  const at::Tensor x = at::randn({4, kIn});
  const at::Tensor want = at::linear(x, constTensor({kOut, kIn}), constTensor({kOut}));
  for (const std::vector<std::string>& modes :
       {std::vector<std::string>{"bf16"}, std::vector<std::string>{"bf16", "int8_dynamic"}}) {
    auto m = load(kLinearIR, modes, "bf16-first");
    EXPECT_FALSE(kernelInfo(*m, "ops_quantized::linear_int8_dynamic")) << modes.size();
    EXPECT_FALSE(kernelInfo(*m, "ops_quantized::linear_fp16")) << modes.size();
    // 4 x 40 -> 48 is below the delegate's size threshold: fp32 on brisk's kernels.
    EXPECT_TRUE(at::allclose(runTwice(*m, x), want, 1e-5, 1e-5)) << modes.size();
  }
  auto m = load(kLinearIR, {"int8_dynamic", "bf16"}, "int8-first");
  EXPECT_TRUE(kernelInfo(*m, "ops_quantized::linear_int8_dynamic"));
}

TEST(QuantizedLinear, UnknownPrecisionIsALoadErrorNamingTheModel) {
  const std::string msg = errorOf([&] { load(kLinearIR, {"fp8"}, "bad-precision"); });
  EXPECT_NE(msg.find("bad-precision"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown precision 'fp8' (known: fp16_weights, int8_dynamic, bf16)"), std::string::npos) << msg;
}

}  // namespace
}  // namespace brisk::testing
