#include "tests/testing/model_check.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "core/graph/graph_verifier.h"
#include "tools/jit_reference.h"

namespace brisk::testing {

std::string runfile(const std::string& path) {
  const char* root = std::getenv("TEST_SRCDIR");
  return std::string(root ? root : ".") + "/brisk/" + path;
}

std::string zooFile(const std::string& file) { return runfile("tools/zoo/" + file); }
std::string zooModel(const std::string& name) { return zooFile(name + ".pt"); }

void expectMatchesJit(const std::string& model_path, const Options& options,
                      const std::vector<std::string>& input_files, Tolerance tol) {
  auto module = Module::load(model_path, options);
  // The graph after every pass (fusions, partitions) is still well formed, its use
  // lists included.
  EXPECT_EQ(verifyGraph(module->compiled()->graph()), std::vector<std::string>{});
  JitReference reference(model_path, options.optimize_numerics);
  auto runtime = module->createRuntime();
  for (const std::string& file : input_files) {
    SCOPED_TRACE("inputs " + file);
    ModelInputs inputs = loadInputs(file);
    ModelInputs pristine = cloneInputs(inputs);
    c10::IValue expected = reference.run(cloneInputs(inputs));
    for (int run = 0; run < 3; ++run) {
      SCOPED_TRACE("run " + std::to_string(run));
      // Alternate the pooled Module::run and an explicitly owned Runtime.
      c10::IValue actual = run % 2 == 0 ? module->run(inputs.args, inputs.kwargs)
                                        : runtime->run(inputs.args, inputs.kwargs);
      EXPECT_EQ(compareIValues(actual, expected, tol), "");
      ModelInputs after{inputs.args, inputs.kwargs};
      EXPECT_EQ(compareIValues(c10::ivalue::Tuple::create(after.args), c10::ivalue::Tuple::create(pristine.args),
                               Tolerance{0, 0, 0}, "args"),
                "")
          << "brisk modified its inputs";
    }
  }
}

void expectHeldOutputsSurvive(Runtime& rt, const ModelInputs& held, const ModelInputs& other, int warmup, int rounds) {
  for (int i = 0; i < warmup; ++i) rt.run(held.args, held.kwargs);
  c10::IValue outputs = rt.run(held.args, held.kwargs);
  c10::IValue copy = cloneInputs(ModelInputs{{outputs}, {}}).args[0];
  for (int i = 0; i < rounds; ++i) {
    rt.run(other.args, other.kwargs);
    rt.run(held.args, held.kwargs);
  }
  EXPECT_EQ(compareIValues(outputs, copy, Tolerance{0, 0, 0}), "");
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message is not one line: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no brisk::Error thrown";
  return "";
}

}  // namespace brisk::testing
