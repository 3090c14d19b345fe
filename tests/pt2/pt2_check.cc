#include "tests/pt2/pt2_check.h"

#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iterator>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "core/frontend/model_inputs.h"
#include "tests/testing/model_check.h"
#include "tools/ivalue_compare.h"

namespace brisk::pt2_testing {

std::string program(const std::string& file) { return testing::runfile("tests/pt2/" + file); }

c10::IValue loadPickle(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return torch::jit::pickle_load(bytes);
}

Options withProgram(const std::string& name) {
  Options o;
  o.pt2_program = name;
  return o;
}

void expectMatchesExport(const std::string& archive, const std::string& name, const Options& options) {
  SCOPED_TRACE(archive + " / " + name);
  auto module = Module::load(program(archive), options);
  ModelInputs inputs = loadInputs(program(name + ".inputs.pt"));
  ModelInputs copy = cloneInputs(inputs);
  c10::IValue expected = loadPickle(program(name + ".expected.pt"));
  for (int run = 0; run < 3; ++run) {
    ModelInputs call = inputs;  // the IValues share tensors: checks the inputs stay put
    c10::IValue out = module->run(call.args, call.kwargs);
    EXPECT_EQ(compareIValues(out, expected, Tolerance{1e-4, 1e-5, 1e-5}), "") << "run " << run;
  }
  EXPECT_EQ(compareIValues(c10::IValue(c10::ivalue::Tuple::create(inputs.args)),
                           c10::IValue(c10::ivalue::Tuple::create(copy.args)), Tolerance{0, 0, 0}),
            "")
      << "the inputs changed";
}

void expectLoadError(const std::string& file, const Options& options, const std::vector<std::string>& parts) {
  try {
    Module::load(program(file), options);
    ADD_FAILURE() << file << " loaded";
  } catch (const Error& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace brisk::pt2_testing
