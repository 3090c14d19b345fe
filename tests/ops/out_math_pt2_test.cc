// The math, reduction, in-place and new_zeros kernels in PT2 programs (exported by
// export_math_programs.py, aten IR and core ATen IR) against ep.module(): every node of
// those ops gets its ops_cpu kernel (none falls back), the outputs match over three
// runs, and the inputs stay unchanged.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iterator>
#include <map>

#include "core/common/options.h"
#include "core/executor/module.h"
#include "core/frontend/model_inputs.h"
#include "tests/testing/model_check.h"
#include "tools/ivalue_compare.h"

namespace brisk {
namespace {

constexpr KernelKind kOut = KernelKind::kOutVariant;

std::string program(const std::string& file) { return testing::runfile("tests/ops/" + file); }

c10::IValue loadPickle(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return torch::jit::pickle_load(bytes);
}

// Loads `archive` with `options`, checks that each op of `kinds` is served by ops_cpu
// with that kernel kind (at least one node each), then runs it three times against
// `name`'s inputs and ep.module()'s outputs.
void expectServedAndMatching(const std::string& archive, const std::string& name, const Options& options,
                             const std::map<std::string, KernelKind>& kinds) {
  SCOPED_TRACE(archive);
  auto m = Module::load(program(archive), options);
  std::map<std::string, int> seen;
  for (const NodeKernelInfo& k : m->kernelReport()) {
    auto it = kinds.find(k.op);
    if (it == kinds.end()) continue;
    ++seen[k.op];
    EXPECT_EQ(k.provider, "ops_cpu") << k.node;
    EXPECT_EQ(k.kind, it->second) << k.node << ": " << k.detail;
  }
  for (const auto& [op, kind] : kinds) EXPECT_GT(seen[op], 0) << op << " not in the program";

  ModelInputs inputs = loadInputs(program(name + ".inputs.pt"));
  const ModelInputs copy = cloneInputs(inputs);
  const c10::IValue expected = loadPickle(program(name + ".expected.pt"));
  for (int run = 0; run < 3; ++run) {
    ModelInputs call = inputs;  // the IValues share tensors: checks the inputs stay put
    const c10::IValue out = m->run(call.args, call.kwargs);
    EXPECT_EQ(compareIValues(out, expected, Tolerance{1e-5, 1e-6, 1e-6}), "") << "run " << run;
  }
  EXPECT_EQ(compareIValues(c10::IValue(c10::ivalue::Tuple::create(inputs.args)),
                           c10::IValue(c10::ivalue::Tuple::create(copy.args)), Tolerance{0, 0, 0}),
            "")
      << "the inputs changed";
}

// Pointwise fusion (ops_cpu.fuse_pointwise) would take the unary and in-place ops into
// fused nodes: off, so that their own kernels are seen.
Options unfused() {
  Options o;
  o.disabled_passes = {"ops_cpu.fuse_pointwise"};
  return o;
}

// Each program with the default options (fusion on) and unfused, checking the kernels.
void expectMatches(const std::string& archive, const std::string& name,
                   const std::map<std::string, KernelKind>& kinds) {
  expectServedAndMatching(archive, name, Options(), {});
  expectServedAndMatching(archive, name, unfused(), kinds);
}

const std::map<std::string, KernelKind> kSharedMathOps = {
    {"aten::exp", kOut},         {"aten::abs", kOut},          {"aten::sin", kOut},     {"aten::cos", kOut},
    {"aten::bitwise_not", kOut}, {"aten::maximum", kOut},      {"aten::minimum", kOut}, {"aten::amax", kOut},
    {"aten::max.dim", kOut},     {"aten::prod.dim_int", kOut},
};

TEST(OutMathPt2, AtenIR) {
  auto kinds = kSharedMathOps;
  kinds.insert({{"aten::__and__.Tensor", kOut},
                {"aten::std.dim", kOut},
                {"aten::std.correction", kOut},
                {"aten::new_zeros", kOut}});
  expectMatches("math_ops.pt2", "math_ops", kinds);
}

// The core IR spells a & b bitwise_and.Tensor (std becomes var + sqrt, new_zeros full).
TEST(OutMathPt2, CoreIR) {
  auto kinds = kSharedMathOps;
  kinds.insert({"aten::bitwise_and.Tensor", kOut});
  expectMatches("math_ops.core.pt2", "math_ops", kinds);
}

// The aten IR keeps the in-place ops; each writes into its (fresh or view) target. Their
// kernels are out-variant ones whose output is the target itself (OutputContract::kFresh).
TEST(OutMathPt2, InPlaceAtenIR) {
  expectMatches("math_inplace.pt2", "math_inplace",
                {{"aten::clamp_", kOut},
                 {"aten::masked_fill_.Scalar", kOut},
                 {"aten::silu_", kOut},
                 {"aten::hardswish_", kOut},
                 {"aten::dropout_", kOut},
                 {"aten::fill_.Tensor", kOut}});
}

// The core IR of the same program (functional ops only) still matches.
TEST(OutMathPt2, InPlaceCoreIR) { expectMatches("math_inplace.core.pt2", "math_inplace", {}); }

}  // namespace
}  // namespace brisk
