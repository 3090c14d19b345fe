// The zoo's model families (tools/zoo/models.py FAMILY_MODELS), in each format brisk
// loads: the TorchScript archive (<name>.pt, against the interpreter) and both PT2 IRs
// (<name>.pt2, <name>.core.pt2, against ep.module()'s saved outputs). For each: inputs
// and inputs2, three runs each, inputs left unchanged; then the nodes left to the
// fallback kernel, which must all be in the model's allow-list below (printed either way,
// so the test log shows what is left).
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

#include "core/executor/module.h"
#include "core/frontend/model_inputs.h"
#include "tests/testing/model_check.h"
#include "tools/ivalue_compare.h"

namespace brisk {
namespace {

using testing::zooFile;

const char* const kFamilies[] = {"efficientnet_b0", "mobilenet_v3_small", "mnasnet0_5", "regnet_y_400mf",
                                 "swin_tiny",       "maxvit_tiny",        "vit_tiny",   "bert_tiny",
                                 "det_head",        "audio_1d",           "dlrm_tiny"};

// rtol 1e-4 and an atol scaled to the output's largest |value|, as the other zoo tests:
// brisk's kernels (oneDNN convs, fused pointwise ops) sum in other orders.
constexpr Tolerance kTol{1e-4, 1e-5, 1e-5};

enum class Format { kTorchScript, kExport, kCore };
const char* suffix(Format f) { return f == Format::kTorchScript ? "" : f == Format::kExport ? ".pt2" : ".core.pt2"; }

struct Case {
  std::string model;
  Format format;
  std::string key() const { return model + suffix(format); }
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.key(); }

c10::IValue loadPickle(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return torch::jit::pickle_load(bytes);
}

// brisk against ep.module()'s outputs export_pt2.py saved, on both input sets (the
// families' programs accept inputs2: same shapes, other values).
void expectMatchesExport(Module& m, const std::string& model) {
  for (const char* tag : {"inputs", "inputs2"}) {
    SCOPED_TRACE(tag);
    ModelInputs inputs = loadInputs(zooFile(model + "." + tag + ".pt"));
    ModelInputs pristine = cloneInputs(inputs);
    const std::string ref = std::string(tag) == "inputs" ? ".pt2.expected.pt" : ".pt2.inputs2.expected.pt";
    c10::IValue expected = loadPickle(zooFile(model + ref));
    for (int run = 0; run < 3; ++run) {
      c10::IValue out = m.run(inputs.args, inputs.kwargs);
      EXPECT_EQ(compareIValues(out, expected, kTol), "") << "run " << run;
    }
    EXPECT_EQ(compareIValues(c10::ivalue::Tuple::create(inputs.args), c10::ivalue::Tuple::create(pristine.args),
                             Tolerance{0, 0, 0}),
              "")
        << "brisk modified its inputs";
  }
}

class ZooFamilies : public ::testing::TestWithParam<Case> {};

TEST_P(ZooFamilies, MatchesReferenceWithoutFallback) {
  const Case& c = GetParam();
  const std::string path = zooFile(c.key() + (c.format == Format::kTorchScript ? ".pt" : ""));
  Options options;
  if (c.format == Format::kTorchScript) {
    testing::expectMatchesJit(path, options,
                              {zooFile(c.model + ".inputs.pt"), zooFile(c.model + ".inputs2.pt")}, kTol);
  }
  auto m = Module::load(path, options);
  if (c.format != Format::kTorchScript) expectMatchesExport(*m, c.model);

  // Every node on an ops_cpu kernel (or a delegate): none left to the TorchScript
  // operator.
  std::map<std::string, int> fallback;
  for (const NodeKernelInfo& info : m->kernelReport())
    if (info.kind == KernelKind::kFallback) ++fallback[info.op];
  std::string report;
  for (const auto& [op, count] : fallback) report += " " + op + " x" + std::to_string(count);
  EXPECT_TRUE(fallback.empty()) << c.key() << " runs on the fallback kernel:" << report;
}

std::vector<Case> allCases() {
  std::vector<Case> out;
  for (const char* m : kFamilies)
    for (Format f : {Format::kTorchScript, Format::kExport, Format::kCore}) out.push_back({m, f});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooFamilies, ::testing::ValuesIn(allCases()), [](const auto& info) {
  const Case& c = info.param;
  return c.model + (c.format == Format::kTorchScript ? "_ts" : c.format == Format::kExport ? "_pt2" : "_core");
});

}  // namespace
}  // namespace brisk
