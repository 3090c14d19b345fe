// addmm / mm with a constant mat2 (ops_cpu/out_variant/linear.cc): the core ATen IR's
// linear, addmm(bias, x, permute(W)) with the permute folded into a constant W^T view.
// Up to 8 rows they run linear's packed small GEMM (bit for bit its documented order),
// beyond that, or with the plugin option ops_cpu.small_gemm off, ATen's own addmm call
// (bit-identical to the interpreter).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/executor/module.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

// `bias_shape` empty: mm(x, mat2). `transposed`: mat2 = permute(W [N, K], [1, 0]) (the
// core IR's form, a non-contiguous view once folded); else mat2 = M [K, N] contiguous.
std::string constMatIR(int64_t n, int64_t k, bool transposed, const std::vector<int64_t>& bias_shape,
                       const std::string& beta = "1", const std::string& alpha = "1") {
  std::string ir = "graph(%x : Tensor):\n";
  if (transposed) {
    ir += constTensorIR("w", {n, k}) +
          "  %perm : int[] = prim::Constant[value=[1, 0]]()\n"
          "  %mat2 : Tensor = aten::permute(%w, %perm)\n";
  } else {
    ir += constTensorIR("mat2", {k, n});
  }
  if (bias_shape.empty()) return ir + "  %y : Tensor = aten::mm(%x, %mat2)\n  return (%y)\n";
  return ir + constTensorIR("b", bias_shape) + "  %beta : int = prim::Constant[value=" + beta +
         "]()\n  %alpha : int = prim::Constant[value=" + alpha +
         "]()\n  %y : Tensor = aten::addmm(%b, %x, %mat2, %beta, %alpha)\n  return (%y)\n";
}

// W [N, K] of the IR above.
at::Tensor weightOf(int64_t n, int64_t k, bool transposed) {
  return transposed ? constTensorValue({n, k}) : constTensorValue({k, n}).t();
}

Options smallGemmOff() {
  Options o;
  o.plugin_options["ops_cpu.small_gemm"] = false;
  return o;
}

struct Case {
  bool transposed;
  std::vector<int64_t> bias;  // empty: mm
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {{true, {70}}, {false, {70}}, {true, {1, 70}}, {true, {1}}, {true, {}}, {false, {}}};
  return c;
}

// The case's bias shape for n output columns (a one-value bias stays one value).
std::vector<int64_t> biasFor(const Case& c, int64_t n) {
  std::vector<int64_t> b = c.bias;
  if (!b.empty() && b.back() != 1) b.back() = n;
  return b;
}

std::string describe(const Case& c) {
  std::string s = c.transposed ? "permuted W" : "contiguous mat2";
  s += c.bias.empty() ? ", mm" : ", bias of " + std::to_string(c.bias.size()) + " dims";
  return s;
}

// Up to 8 rows: the packed kernel, bit for bit; 9 and more: bit-identical to ATen's addmm.
TEST(OutCoreLinear, ConstantMat2RunsThePackedKernelThenAtenAddmm) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(describe(c));
    const std::string op = c.bias.empty() ? "aten::mm" : "aten::addmm";
    auto m = Module::fromIR(constMatIR(70, 80, c.transposed, c.bias), Options{}, "core-linear");
    EXPECT_NE(kernelDetail(*m, op).find("small_gemm"), std::string::npos) << kernelDetail(*m, op);
    EXPECT_NE(kernelDetail(*m, op).find("constant mat2"), std::string::npos) << kernelDetail(*m, op);
    const at::Tensor w = weightOf(70, 80, c.transposed);
    const at::Tensor bias = c.bias.empty() ? at::Tensor() : constTensorValue(c.bias);
    const at::Tensor row = bias.defined() ? bias.reshape({-1}).expand({70}).contiguous() : at::Tensor();
    for (int64_t rows : {1, 3, 8, 0}) {
      at::Tensor x = at::randn({rows, 80});
      at::Tensor y = m->run({x}).toTensor();
      EXPECT_TRUE(bitEqual(y, smallGemmReference(x, w, row))) << "rows " << rows;
    }
    for (int64_t rows : {9, 37}) {
      at::Tensor x = at::randn({rows, 80});
      at::Tensor y = m->run({x}).toTensor();
      at::Tensor want = bias.defined() ? at::addmm(bias, x, w.t()) : at::mm(x, w.t());
      EXPECT_TRUE(bitEqual(y, want)) << "rows " << rows;
    }
  }
}

// Option off: every row count is ATen's addmm (mm) call on these operands, bit for bit.
// (Compared with ATen's op itself: the TorchScript interpreter decomposes addmm into
// mm + add, which rounds differently at one row.)
TEST(OutCoreLinear, SmallGemmOffIsBitExact) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(describe(c));
    const std::string op = c.bias.empty() ? "aten::mm" : "aten::addmm";
    auto m = Module::fromIR(constMatIR(48, 40, c.transposed, biasFor(c, 48)), smallGemmOff(), "core-linear");
    EXPECT_EQ(kernelDetail(*m, op).find("small_gemm"), std::string::npos) << kernelDetail(*m, op);
    const at::Tensor mat2 = weightOf(48, 40, c.transposed).t();
    const at::Tensor bias = c.bias.empty() ? at::Tensor() : constTensorValue(biasFor(c, 48));
    for (int64_t rows : {1, 5, 33, 5, 1}) {
      at::Tensor x = at::randn({rows, 40});
      at::Tensor y = m->run({x}).toTensor();
      EXPECT_TRUE(bitEqual(y, bias.defined() ? at::addmm(bias, x, mat2) : at::mm(x, mat2))) << "rows " << rows;
    }
  }
}

// Against the interpreter with the option on (fp32 tolerance): shapes that grow and
// shrink, widths across panel edges, one output column, non-contiguous x (ATen's path).
TEST(OutCoreLinear, MatchesInterpreter) {
  for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 64}, {7, 5}, {130, 40}}) {
    for (const Case& c : cases()) {
      SCOPED_TRACE(describe(c) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
      OpTester(constMatIR(n, k, c.transposed, biasFor(c, n)))
          .inputs({at::randn({1, k})})
          .inputs({at::randn({6, k})})
          .inputs({at::randn({k, 4}).t()})
          .inputs({at::randn({20, k})})
          .inputs({at::randn({0, k})})
          // An absolute floor of 1e-5, as below: with one output column (n=1) and one row,
          // the output is a single K-term sum, so the scaled term (relative to the largest
          // output) has nothing to scale with when that sum cancels, while its rounding is
          // relative to the terms' size. Packed and MKL kernels sum in other orders (and
          // MKL's order moves with buffer alignment): 2.1e-6 was seen at k=64.
          .tolerance(Tolerance{1e-5, 1e-5, 1e-6})
          .expectKernel(c.bias.empty() ? "aten::mm" : "aten::addmm", kOut)
          .run();
    }
  }
}

// A bias with one row per input row is no row vector: ATen's addmm serves every size.
TEST(OutCoreLinear, FullBiasTakesAtenAddmm) {
  auto m = Module::fromIR(constMatIR(6, 4, true, {3, 6}), Options{}, "core-linear");
  EXPECT_EQ(kernelDetail(*m, "aten::addmm").find("small_gemm"), std::string::npos);
  OpTester(constMatIR(6, 4, true, {3, 6}))
      .inputs({at::randn({3, 4})})
      .tolerance(Tolerance{0, 0, 0})
      .expectKernel("aten::addmm", kOut)
      .run();
}

// beta / alpha other than 1 are not linear: the generic addmm kernel takes the node.
TEST(OutCoreLinear, OtherBetaAlphaDecline) {
  const std::string ir = constMatIR(6, 4, true, {6}, "2", "1");
  auto m = Module::fromIR(ir, Options{}, "core-linear");
  EXPECT_EQ(kernelDetail(*m, "aten::addmm"), "at::cpu::addmm_out");
  OpTester(ir).inputs({at::randn({2, 4})}).tolerance(Tolerance{1e-5, 1e-6}).expectKernel("aten::addmm", kOut).run();
}

// Operands addmm refuses are refused with ATen's message, and the module still runs.
TEST(OutCoreLinear, BadInputsRaiseAtensError) {
  Options loose;
  loose.strict_inputs = false;
  for (bool small_gemm : {true, false}) {
    Options o = loose;
    o.plugin_options["ops_cpu.small_gemm"] = small_gemm;
    auto m = Module::fromIR(constMatIR(6, 4, true, {6}), o, "core-linear");
    EXPECT_ANY_THROW(m->run({at::randn({2, 5})}));  // K mismatch
    EXPECT_ANY_THROW(m->run({at::randn({4})}));     // 1-D x: addmm needs a matrix
    EXPECT_ANY_THROW(m->run({at::randn({2, 4}, at::kDouble)}));
    at::Tensor x = at::randn({2, 4});
    // The packed kernel sums in another order than MKL: an absolute floor, or an output
    // near zero fails allclose's default atol of 1e-8 about one run in a hundred.
    EXPECT_TRUE(at::allclose(m->run({x}).toTensor(), at::addmm(constTensorValue({6}), x, constTensorValue({6, 4}).t()),
                             1e-5, 1e-5));
  }
}

}  // namespace
}  // namespace brisk::testing
