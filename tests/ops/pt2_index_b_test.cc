// The kernels of ops_cpu's indexing.cc, resize_pad.cc, views_more.cc, einsum.cc,
// conv1d / group_norm and pt2_bookkeeping.cc on torch.export programs
// (export_index_programs.py): each op named below is served by ops_cpu (never the
// fallback) and the program's outputs match ep.module()'s.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iterator>
#include <set>

#include "core/common/error.h"
#include "core/common/options.h"
#include "core/executor/module.h"
#include "core/frontend/model_inputs.h"
#include "core/graph/graph.h"
#include "tests/testing/model_check.h"
#include "tools/ivalue_compare.h"

namespace brisk {
namespace {

c10::IValue loadPickle(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return torch::jit::pickle_load(bytes);
}

std::string program(const std::string& file) { return testing::runfile("tests/ops/" + file); }

// Loads <name>.pt2, checks that every op in `ops` is served by ops_cpu with a kernel of
// its own, and runs it three times against ep.module()'s outputs (same kernels as
// ATen's: exact but for conv1d / group_norm / einsum, whose ATen kernels may pick
// another blocking for another batch, hence the small tolerance).
void expectProgram(const std::string& name, const std::set<std::string>& ops) {
  SCOPED_TRACE(name);
  auto m = Module::load(program(name + ".pt2"), Options{});
  std::set<std::string> seen;
  for (const NodeKernelInfo& k : m->kernelReport()) {
    if (!ops.count(k.op)) continue;
    seen.insert(k.op);
    EXPECT_NE(k.kind, KernelKind::kFallback) << k.op;
    EXPECT_EQ(k.provider, "ops_cpu") << k.op << ": " << k.detail;
  }
  EXPECT_EQ(seen, ops) << m->compiled()->graph().str();
  const c10::IValue expected = loadPickle(program(name + ".expected.pt"));
  ModelInputs inputs = loadInputs(program(name + ".inputs.pt"));
  const ModelInputs copy = cloneInputs(inputs);
  for (int run = 0; run < 3; ++run)
    EXPECT_EQ(compareIValues(m->run(inputs.args, inputs.kwargs), expected, Tolerance{1e-5, 1e-6}), "") << "run " << run;
  EXPECT_EQ(compareIValues(c10::IValue(c10::ivalue::Tuple::create(inputs.args)),
                           c10::IValue(c10::ivalue::Tuple::create(copy.args)), Tolerance{0, 0, 0}),
            "")
      << "the inputs changed";
}

TEST(Pt2Index, AtenIR) {
  expectProgram("index_aten",
                {"aten::einsum", "aten::roll", "aten::pad", "aten::gather", "aten::topk", "aten::index_select",
                 "aten::diagonal", "aten::narrow", "aten::index_add", "aten::swapaxes",
                 "aten::upsample_nearest1d.vec", "aten::upsample_nearest2d.vec", "aten::upsample_nearest3d.vec",
                 "aten::conv1d", "aten::group_norm", "aten::_assert_tensor_metadata"});
}

TEST(Pt2Index, CoreIR) {
  expectProgram("index_core", {"aten::constant_pad_nd", "aten::alias", "aten::gather", "aten::topk",
                               "aten::index_select", "aten::diagonal", "aten::upsample_nearest2d.vec",
                               "aten::_assert_tensor_metadata"});
}

TEST(Pt2Index, DynamicSymNumel) { expectProgram("index_dynamic", {"aten::sym_numel"}); }

// A program whose _assert_tensor_metadata expects float64 of a float32 input (edited
// after export; brisk's own input check accepts the input): brisk::Error naming the
// node and the mismatch.
TEST(Pt2Index, AssertTensorMetadataFailsNamingTheNode) {
  auto m = Module::load(program("index_assert_fails.pt2"), Options{});
  ModelInputs inputs = loadInputs(program("index_assert_fails.inputs.pt"));
  try {
    m->run(inputs.args, inputs.kwargs);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(e.namesNode()) << e.what();
    EXPECT_EQ(e.where().op, "aten::_assert_tensor_metadata") << e.what();
    EXPECT_NE(e.message().find("dtype Float, the program expects Double"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace brisk
