// The small-tensor fast path of add / sub / mul / div (ops_cpu/out_variant/small_binary.h):
// which calls it takes (planBinary / scalarResultDtype, checked directly), and that
// brisk's results equal ATen's bit for bit on both sides of every condition: dtypes,
// alpha, 0-dim and one-element operands, Scalar arguments, the element threshold,
// non-contiguous inputs, in-place reuse and retained outputs of another size.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "core/executor/module.h"
#include "ops_cpu/out_variant/small_binary.h"
#include "ops_cpu/out_variant/small_unary.h"
#include "tests/ops/op_tester.h"

namespace brisk::testing {
namespace {

namespace small = ::brisk::ops_cpu::out::small;
using small::BinOp;
using small::kMaxElems;
using small::planBinary;

Options loose() {
  Options o;
  o.strict_inputs = false;  // input sets below differ in shape and dtype
  // The single-node kernels are under test: elementwise fusion would run the two-op
  // graphs below as one fused node (whose NaN signs may differ from ATen's).
  o.disabled_passes = {"ops_cpu.fuse_pointwise"};
  return o;
}

// Random values of `dtype` (integers in a range where products overflow sometimes).
at::Tensor rnd(std::vector<int64_t> sizes, at::ScalarType dtype) {
  if (dtype == at::kLong) return at::randint(-(int64_t{1} << 40), int64_t{1} << 40, sizes, at::kLong);
  return at::randn(sizes, at::TensorOptions().dtype(dtype));
}

// Runs `ir` on `args` (several times, so retained outputs are reused) and checks the
// result against `ref(args)` bit for bit.
void expectBits(const std::shared_ptr<Module>& m, const std::vector<c10::IValue>& args,
                const std::function<at::Tensor(const std::vector<c10::IValue>&)>& ref, const std::string& what) {
  const at::Tensor want = ref(args);
  for (int rep = 0; rep < 2; ++rep) {
    const at::Tensor got = m->run(args).toTensor().clone();
    EXPECT_TRUE(bitEqual(got, want)) << what << " rep " << rep << "\ngot " << got << "\nwant " << want;
  }
}

std::string tensorIR(const std::string& op, const std::string& alpha_decl) {
  return "graph(%a : Tensor, %b : Tensor):\n" + alpha_decl + "  %c : Tensor = " + op + "(%a, %b" +
         (alpha_decl.empty() ? "" : ", %alpha") + ")\n  return (%c)\n";
}

struct BinCase {
  std::string op;          // aten::add ...
  std::string alpha_decl;  // "" for mul / div
  std::function<at::Tensor(const at::Tensor&, const at::Tensor&)> aten;
};

std::vector<BinCase> binCases() {
  return {
      {"aten::add", "  %alpha : int = prim::Constant[value=1]()\n",
       [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); }},
      {"aten::add", "  %alpha : int = prim::Constant[value=3]()\n",
       [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b, 3); }},
      {"aten::add", "  %alpha : float = prim::Constant[value=0.3]()\n",
       [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b, 0.3); }},
      {"aten::sub", "  %alpha : int = prim::Constant[value=1]()\n",
       [](const at::Tensor& a, const at::Tensor& b) { return at::sub(a, b); }},
      {"aten::sub", "  %alpha : float = prim::Constant[value=-1.7]()\n",
       [](const at::Tensor& a, const at::Tensor& b) { return at::sub(a, b, -1.7); }},
      {"aten::mul", "", [](const at::Tensor& a, const at::Tensor& b) { return at::mul(a, b); }},
      {"aten::div", "", [](const at::Tensor& a, const at::Tensor& b) { return at::div(a, b); }},
  };
}

// (a sizes, b sizes) pairs: same shape, scalar-broadcast either way, 0-dim, at and above
// the threshold.
std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes() {
  return {{{1}, {1}},   {{}, {}},       {{7}, {7}},   {{2, 3}, {1}}, {{1}, {5}},  {{4}, {}},
          {{}, {6}},    {{1, 1}, {1}},  {{kMaxElems}, {kMaxElems}}, {{kMaxElems + 1}, {kMaxElems + 1}},
          {{kMaxElems}, {}}, {{kMaxElems + 1}, {1}}, {{3, 5}, {3, 5}}};
}

TEST(SmallTensor, TensorTensorBitsEqualAten) {
  for (const BinCase& c : binCases()) {
    auto m = Module::fromIR(tensorIR(c.op, c.alpha_decl), loose());
    for (at::ScalarType dt : {at::kFloat, at::kDouble, at::kLong}) {
      const bool float_alpha = c.alpha_decl.find("float") != std::string::npos;
      if (dt == at::kLong && float_alpha) continue;  // ATen's error, not a fast-path case
      for (const auto& [sa, sb] : shapes()) {
        for (int trial = 0; trial < 8; ++trial) {
          at::Tensor a = rnd(sa, dt), b = rnd(sb, dt);
          if (c.op == "aten::div" && dt == at::kLong) b = b.abs() + 1;  // true division into float
          expectBits(
              m, {a, b}, [&](const std::vector<c10::IValue>& v) { return c.aten(v[0].toTensor(), v[1].toTensor()); },
              c.op + c.alpha_decl + " " + std::string(c10::toString(dt)) + " " + c10::str(sa) + " x " + c10::str(sb));
        }
      }
    }
  }
}

TEST(SmallTensor, MixedDtypesFollowAtenPromotion) {
  // 0-dim operands of another dtype: absorbed within a category (float [n] + double [] ->
  // float), promoted across it (long [n] + double [] -> double); Scalar-like int into
  // float; two dimensioned dtypes and 0-dim pairs go to ATen.
  std::vector<std::pair<at::Tensor, at::Tensor>> pairs = {
      {rnd({3}, at::kFloat), at::scalar_tensor(0.001, at::kDouble)},
      {at::scalar_tensor(2.5, at::kDouble), rnd({3}, at::kFloat)},
      {rnd({1}, at::kFloat), at::scalar_tensor(7, at::kLong)},
      {rnd({5}, at::kDouble), at::scalar_tensor(3, at::kInt)},
      {rnd({2}, at::kLong), at::scalar_tensor(3, at::kInt)},
      {rnd({2}, at::kLong), at::scalar_tensor(0.5, at::kDouble)},
      {rnd({2}, at::kLong), at::scalar_tensor(0.5, at::kFloat)},
      {rnd({4}, at::kFloat), rnd({4}, at::kDouble)},
      {at::scalar_tensor(1.25, at::kFloat), at::scalar_tensor(0.1, at::kDouble)},
      {rnd({3}, at::kFloat), at::scalar_tensor(true, at::kBool)},
      {rnd({3}, at::kLong).to(at::kInt), rnd({3}, at::kLong).to(at::kInt)},
  };
  for (const BinCase& c : binCases()) {
    auto m = Module::fromIR(tensorIR(c.op, c.alpha_decl), loose());
    for (const auto& [a, b] : pairs) {
      if (c.alpha_decl.find("float") != std::string::npos && !c10::isFloatingType(at::result_type(a, b))) continue;
      if (c.op == "aten::sub" && (a.scalar_type() == at::kBool || b.scalar_type() == at::kBool)) continue;
      expectBits(
          m, {a, b}, [&](const std::vector<c10::IValue>& v) { return c.aten(v[0].toTensor(), v[1].toTensor()); },
          c.op + " " + a.toString() + c10::str(a.sizes()) + " x " + b.toString() + c10::str(b.sizes()));
    }
  }
}

TEST(SmallTensor, TensorScalarBitsEqualAten) {
  struct S {
    std::string decl;  // the Scalar constant
    c10::Scalar value;
  };
  const std::vector<S> scalars = {{"float = prim::Constant[value=0.001]()", 0.001},
                                  {"int = prim::Constant[value=3]()", 3},
                                  {"float = prim::Constant[value=-2.5]()", -2.5}};
  for (const S& s : scalars) {
    const std::vector<std::pair<std::string, std::function<at::Tensor(const at::Tensor&)>>> ops = {
        {"  %alpha : int = prim::Constant[value=1]()\n  %c : Tensor = aten::add(%a, %s, %alpha)\n",
         [&](const at::Tensor& a) { return at::add(a, s.value); }},
        {"  %alpha : float = prim::Constant[value=0.7]()\n  %c : Tensor = aten::add(%a, %s, %alpha)\n",
         [&](const at::Tensor& a) { return at::add(a, s.value, 0.7); }},
        {"  %alpha : int = prim::Constant[value=2]()\n  %c : Tensor = aten::sub(%a, %s, %alpha)\n",
         [&](const at::Tensor& a) { return at::sub(a, s.value, 2); }},
        {"  %c : Tensor = aten::mul(%a, %s)\n", [&](const at::Tensor& a) { return at::mul(a, s.value); }},
        {"  %c : Tensor = aten::div(%a, %s)\n", [&](const at::Tensor& a) { return at::div(a, s.value); }},
    };
    for (const auto& [body, aten] : ops) {
      const std::string ir = "graph(%a : Tensor):\n  %s : " + s.decl + "\n" + body + "  return (%c)\n";
      auto m = Module::fromIR(ir, loose());
      for (at::ScalarType dt : {at::kFloat, at::kDouble, at::kLong, at::kInt}) {
        if (c10::isIntegralType(dt, false) && body.find("float") != std::string::npos) continue;
        for (std::vector<int64_t> sizes : {std::vector<int64_t>{}, {1}, {9}, {kMaxElems}, {kMaxElems + 1}}) {
          const at::Tensor a = rnd(sizes, dt == at::kInt ? at::kLong : dt).to(dt);
          expectBits(
              m, {a}, [&](const std::vector<c10::IValue>& v) { return aten(v[0].toTensor()); },
              ir + std::string(c10::toString(dt)) + c10::str(sizes));
        }
      }
    }
  }
}

TEST(SmallTensor, RuntimeScalarArgument) {
  auto m = Module::fromIR(
      "graph(%a : Tensor, %s : float):\n"
      "  %alpha : int = prim::Constant[value=1]()\n"
      "  %c : Tensor = aten::add(%a, %s, %alpha)\n"
      "  %d : Tensor = aten::mul(%c, %s)\n"
      "  return (%d)\n",
      loose());
  for (double s : {0.1, -3.0, 1e30}) {
    const at::Tensor a = rnd({3}, at::kFloat);
    expectBits(
        m, {a, s}, [&](const std::vector<c10::IValue>&) { return at::mul(at::add(a, s), s); }, "runtime scalar");
  }
}

TEST(SmallTensor, ChainsReuseInputsAndResizeOutputs) {
  // %t is single-use: the add may write into it (in-place reuse); the sub's retained
  // output changes size between runs (resize when needed, both directions).
  const std::string ir =
      "graph(%a : Tensor, %b : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %k : float = prim::Constant[value=0.25]()\n"
      "  %t : Tensor = aten::mul(%a, %b)\n"
      "  %u : Tensor = aten::add(%t, %k, %one)\n"
      "  %v : Tensor = aten::sub(%u, %a, %one)\n"
      "  %w : Tensor = aten::div(%v, %b)\n"
      "  %x : Tensor = aten::add(%w, %v, %one)\n"
      "  return (%x, %t)\n";
  auto m = Module::fromIR(ir, loose());
  for (std::vector<int64_t> sizes :
       {std::vector<int64_t>{1}, {50}, {3}, {kMaxElems + 10}, {2, 2}, {}, {1}, {kMaxElems}}) {
    const at::Tensor a = rnd(sizes, at::kFloat), b = rnd(sizes, at::kFloat);
    const at::Tensor t = at::mul(a, b);
    const at::Tensor v = at::sub(at::add(t, 0.25), a);
    const at::Tensor want = at::add(at::div(v, b), v);
    for (int rep = 0; rep < 2; ++rep) {
      auto out = m->run({a, b}).toTuple();
      EXPECT_TRUE(bitEqual(out->elements()[0].toTensor(), want)) << c10::str(sizes);
      EXPECT_TRUE(bitEqual(out->elements()[1].toTensor(), t)) << c10::str(sizes);
    }
  }
}

TEST(SmallTensor, NonContiguousInputsMatchAten) {
  auto m = Module::fromIR(tensorIR("aten::mul", ""), loose());
  const at::Tensor base = rnd({4, 4}, at::kFloat);
  const at::Tensor col = base.select(1, 1);  // stride 4
  const at::Tensor tr = base.t();
  expectBits(
      m, {col, rnd({4}, at::kFloat)}, [](const std::vector<c10::IValue>& v) {
        return at::mul(v[0].toTensor(), v[1].toTensor());
      },
      "strided column");
  expectBits(
      m, {tr, base}, [](const std::vector<c10::IValue>& v) { return at::mul(v[0].toTensor(), v[1].toTensor()); },
      "transposed");
}

TEST(SmallTensor, KernelsDescribeTheFastPath) {
  auto m = Module::fromIR(tensorIR("aten::add", "  %alpha : int = prim::Constant[value=1]()\n"));
  EXPECT_NE(kernelDetail(*m, "aten::add.Tensor").find("small: direct loop"), std::string::npos)
      << kernelDetail(*m, "aten::add.Tensor");
}

// --- unary ops ------------------------------------------------------------------------------

// Random values with the edge cases of clamp / relu6 mixed in: -0.0, +0.0, NaN, +-inf and
// the bounds themselves.
at::Tensor unaryInput(std::vector<int64_t> sizes, at::ScalarType dt, int trial) {
  at::Tensor x = rnd(sizes, dt);
  if (!c10::isFloatingType(dt) || x.numel() == 0) return x;
  const double specials[] = {-0.0, 0.0, NAN, INFINITY, -INFINITY, 6.0, -0.5, 0.5, 1e-30, -40.0};
  at::Tensor flat = x.view({-1});
  for (int64_t i = 0; i < flat.numel(); i += 2) flat[i] = specials[(i / 2 + trial) % 10];
  return x;
}

TEST(SmallTensor, UnaryBitsEqualAten) {
  struct U {
    std::string body;
    std::function<at::Tensor(const at::Tensor&)> aten;
    bool integers;
  };
  const std::vector<U> ops = {
      {"  %c : Tensor = aten::neg(%a)\n", [](const at::Tensor& x) { return at::neg(x); }, true},
      {"  %c : Tensor = aten::sigmoid(%a)\n", [](const at::Tensor& x) { return at::sigmoid(x); }, false},
      {"  %c : Tensor = aten::tanh(%a)\n", [](const at::Tensor& x) { return at::tanh(x); }, false},
      {"  %c : Tensor = aten::relu6(%a)\n", [](const at::Tensor& x) { return at::relu6(x); }, false},
      {"  %lo : float = prim::Constant[value=-0.5]()\n  %hi : float = prim::Constant[value=0.5]()\n"
       "  %c : Tensor = aten::hardtanh(%a, %lo, %hi)\n",
       [](const at::Tensor& x) { return at::hardtanh(x, -0.5, 0.5); }, false},
      {"  %lo : int = prim::Constant[value=0]()\n  %hi : NoneType = prim::Constant()\n"
       "  %c : Tensor = aten::clamp(%a, %lo, %hi)\n",
       [](const at::Tensor& x) { return at::clamp(x, 0, c10::nullopt); }, false},
      {"  %lo : NoneType = prim::Constant()\n  %hi : float = prim::Constant[value=-0.0]()\n"
       "  %c : Tensor = aten::clamp(%a, %lo, %hi)\n",
       [](const at::Tensor& x) { return at::clamp(x, c10::nullopt, -0.0); }, false},
      {"  %lo : float = prim::Constant[value=0.25]()\n  %hi : float = prim::Constant[value=-1.0]()\n"
       "  %c : Tensor = aten::clamp(%a, %lo, %hi)\n",
       [](const at::Tensor& x) { return at::clamp(x, 0.25, -1.0); }, false},
  };
  for (const U& u : ops) {
    const std::string ir = "graph(%a : Tensor):\n" + u.body + "  return (%c)\n";
    // Also as the second node of a chain, where it may write into its input.
    const std::string chain_ir = "graph(%a : Tensor):\n  %t : Tensor = aten::mul(%a, %a)\n" +
                                 std::regex_replace(u.body, std::regex(R"(\(%a)"), "(%t") + "  return (%c)\n";
    for (const bool chain : {false, true}) {
      const std::string& g = chain ? chain_ir : ir;
      auto m = Module::fromIR(g, loose());
      for (at::ScalarType dt : {at::kFloat, at::kDouble, at::kLong}) {
        if (dt == at::kLong && !u.integers) continue;
        for (std::vector<int64_t> sizes : {std::vector<int64_t>{}, {1}, {small::kMaxScalarTail}, {8}, {2, 5}, {16},
                                           {33}, {kMaxElems}, {kMaxElems + 1}}) {
          for (int trial = 0; trial < 4; ++trial) {
            const at::Tensor a = unaryInput(sizes, dt, trial);
            expectBits(
                m, {a},
                [&](const std::vector<c10::IValue>& v) {
                  const at::Tensor& x = v[0].toTensor();
                  return u.aten(chain ? at::mul(x, x) : x);
                },
                g + std::string(c10::toString(dt)) + c10::str(sizes));
          }
        }
      }
    }
  }
}

TEST(SmallTensorPlan, UnaryBounds) {
  const small::UnarySpec neg{small::UnOp::kNeg}, sig{small::UnOp::kSigmoid};
  EXPECT_TRUE(small::unaryApplies(neg, rnd({kMaxElems}, at::kLong)));
  EXPECT_FALSE(small::unaryApplies(neg, rnd({kMaxElems + 1}, at::kFloat)));
  EXPECT_TRUE(small::unaryApplies(sig, rnd({small::kMaxScalarTail}, at::kFloat)));
  EXPECT_FALSE(small::unaryApplies(sig, rnd({small::kMaxScalarTail + 1}, at::kFloat)));
  EXPECT_FALSE(small::unaryApplies(sig, rnd({3}, at::kLong)));  // promotes to float: ATen
  EXPECT_FALSE(small::unaryApplies(neg, rnd({4, 4}, at::kFloat).select(1, 0)));
  EXPECT_TRUE(small::unaryApplies(neg, rnd({4, 4}, at::kFloat).select(1, 0).slice(0, 0, 1)));
  EXPECT_EQ(small::clampSpec(c10::Scalar(NAN), c10::nullopt).op, small::UnOp::kNone);
  EXPECT_EQ(small::clampSpec(c10::Scalar(int64_t{1} << 60), c10::nullopt).op, small::UnOp::kNone);
  EXPECT_EQ(small::clampSpec(c10::Scalar(0), c10::Scalar(6)).op, small::UnOp::kClamp);
}

// --- the decision itself ------------------------------------------------------------------

TEST(SmallTensorPlan, TakesSmallContiguousSameDtype) {
  for (at::ScalarType dt : {at::kFloat, at::kDouble, at::kLong}) {
    const at::Tensor a = rnd({kMaxElems}, dt), b = rnd({kMaxElems}, dt);
    auto p = planBinary(BinOp::kAdd, a, b);
    EXPECT_TRUE(p.ok) << dt;
    EXPECT_EQ(p.dtype, dt);
    EXPECT_FALSE(p.a_scalar || p.b_scalar);
  }
  EXPECT_FALSE(planBinary(BinOp::kDiv, rnd({3}, at::kLong), rnd({3}, at::kLong)).ok);  // true division
  EXPECT_TRUE(planBinary(BinOp::kDiv, rnd({3}, at::kDouble), rnd({3}, at::kDouble)).ok);
}

TEST(SmallTensorPlan, ThresholdIsOnResultElements) {
  EXPECT_TRUE(planBinary(BinOp::kMul, rnd({kMaxElems}, at::kFloat), rnd({1}, at::kFloat)).ok);
  EXPECT_FALSE(planBinary(BinOp::kMul, rnd({kMaxElems + 1}, at::kFloat), rnd({1}, at::kFloat)).ok);
  EXPECT_FALSE(planBinary(BinOp::kMul, rnd({1}, at::kFloat), rnd({kMaxElems + 1}, at::kFloat)).ok);
  EXPECT_FALSE(planBinary(BinOp::kMul, rnd({kMaxElems + 1}, at::kFloat), rnd({kMaxElems + 1}, at::kFloat)).ok);
}

TEST(SmallTensorPlan, BroadcastOnlyFromOneElement) {
  auto p = planBinary(BinOp::kAdd, rnd({2, 3}, at::kFloat), rnd({1, 1}, at::kFloat));
  EXPECT_TRUE(p.ok && p.b_scalar && !p.a_scalar);
  p = planBinary(BinOp::kAdd, rnd({}, at::kFloat), rnd({5}, at::kFloat));
  EXPECT_TRUE(p.ok && p.a_scalar && !p.b_scalar);
  // [1, 1] against [3]: the result is [1, 3], not the larger operand's sizes.
  EXPECT_FALSE(planBinary(BinOp::kAdd, rnd({3}, at::kFloat), rnd({1, 1}, at::kFloat)).ok);
  // A real broadcast ([2, 1] x [1, 3]) is TensorIterator's job.
  EXPECT_FALSE(planBinary(BinOp::kAdd, rnd({2, 1}, at::kFloat), rnd({1, 3}, at::kFloat)).ok);
  EXPECT_FALSE(planBinary(BinOp::kAdd, rnd({2, 3}, at::kFloat), rnd({3}, at::kFloat)).ok);
}

TEST(SmallTensorPlan, NonContiguousDeclined) {
  const at::Tensor base = rnd({4, 4}, at::kFloat);
  EXPECT_FALSE(planBinary(BinOp::kAdd, base.select(1, 0), rnd({4}, at::kFloat)).ok);
  EXPECT_FALSE(planBinary(BinOp::kAdd, base, base.t()).ok);
  EXPECT_FALSE(planBinary(BinOp::kAdd, rnd({8}, at::kFloat), rnd({16}, at::kFloat).slice(0, 0, 16, 2)).ok);
  EXPECT_FALSE(planBinary(BinOp::kAdd, base.select(1, 0), base[2][3]).ok);  // the column is strided
  // A strided one-element operand is a broadcast scalar: its stride does not matter.
  EXPECT_TRUE(planBinary(BinOp::kAdd, rnd({4}, at::kFloat), base.select(1, 2).slice(0, 1, 2)).ok);
}

TEST(SmallTensorPlan, DtypeRules) {
  using ST = at::ScalarType;
  auto dt = [](const at::Tensor& a, const at::Tensor& b) {
    auto p = planBinary(BinOp::kAdd, a, b);
    return p.ok ? p.dtype : ST::Undefined;
  };
  EXPECT_EQ(dt(rnd({3}, at::kFloat), at::scalar_tensor(1.0, at::kDouble)), at::kFloat);
  EXPECT_EQ(dt(at::scalar_tensor(1.0, at::kDouble), rnd({3}, at::kFloat)), at::kFloat);
  EXPECT_EQ(dt(rnd({3}, at::kFloat), at::scalar_tensor(1, at::kLong)), at::kFloat);
  EXPECT_EQ(dt(rnd({3}, at::kLong), at::scalar_tensor(1, at::kInt)), at::kLong);
  EXPECT_EQ(dt(rnd({3}, at::kLong), at::scalar_tensor(1.0, at::kDouble)), ST::Undefined);  // promotes
  EXPECT_EQ(dt(rnd({3}, at::kFloat), rnd({3}, at::kDouble)), ST::Undefined);
  EXPECT_EQ(dt(at::scalar_tensor(1.0, at::kFloat), at::scalar_tensor(1.0, at::kDouble)), ST::Undefined);
  EXPECT_EQ(dt(rnd({3}, at::kFloat), at::scalar_tensor(true, at::kBool)), ST::Undefined);
  EXPECT_EQ(dt(rnd({3}, at::kLong).to(at::kInt), rnd({3}, at::kLong).to(at::kInt)), ST::Undefined);
  EXPECT_EQ(dt(rnd({3}, at::kFloat).to(at::kHalf), rnd({3}, at::kFloat).to(at::kHalf)), ST::Undefined);
  // Neg-bit views hold other values than their memory: ATen's job.
  const at::Tensor c = at::randn({3}, at::kComplexFloat);
  EXPECT_FALSE(planBinary(BinOp::kAdd, c, c).ok);

  const at::Tensor f = rnd({3}, at::kFloat), l = rnd({3}, at::kLong);
  EXPECT_EQ(small::scalarResultDtype(BinOp::kAdd, f, small::Num::of(c10::Scalar(2))), at::kFloat);
  EXPECT_EQ(small::scalarResultDtype(BinOp::kAdd, l, small::Num::of(c10::Scalar(2))), at::kLong);
  EXPECT_EQ(small::scalarResultDtype(BinOp::kAdd, l, small::Num::of(c10::Scalar(2.5))), ST::Undefined);
  EXPECT_EQ(small::scalarResultDtype(BinOp::kDiv, l, small::Num::of(c10::Scalar(2))), ST::Undefined);
  EXPECT_EQ(small::scalarResultDtype(BinOp::kAdd, f, small::Num::of(c10::Scalar(true))), ST::Undefined);
}

}  // namespace
}  // namespace brisk::testing
