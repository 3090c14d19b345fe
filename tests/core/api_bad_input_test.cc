// The C++ API (core/executor/module.h) fed the bad inputs that tests/python/
// hardening_test.py, swap_weights_test.py and tests/cli feed the binding and the CLI:
// bad model files, bad run inputs (TorchScript and PT2), out-of-range or unknown options,
// bad plugins, bad weight swaps. Each must throw exactly brisk::Error (nothing else
// escapes: a c10::Error or std::out_of_range is a bug) with a one-line message naming the
// model (and what is wrong); a Module that survives still runs correctly afterwards, and
// a refused swap changes nothing.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <typeinfo>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "core/executor/runtime.h"
#include "core/frontend/model_inputs.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

std::string tmpDir() {
  const char* d = std::getenv("TEST_TMPDIR");
  return d ? d : "/tmp";
}

std::string readBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string writeTmp(const std::string& name, const std::string& bytes) {
  const std::string path = tmpDir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

// `f` must throw brisk::Error and nothing else, with a one-line message holding every
// fragment. `what` names the case in a failure.
void expectBriskError(const std::string& what, const std::function<void()>& f,
                      const std::vector<std::string>& fragments) {
  try {
    f();
  } catch (const Error& e) {
    const std::string msg = e.what();
    std::printf("%s: %s\n", what.c_str(), msg.c_str());  // the log shows every message
    EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": message is not one line: " << msg;
    for (const auto& part : fragments)
      EXPECT_NE(msg.find(part), std::string::npos) << what << ": '" << part << "' not in: " << msg;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw " << typeid(e).name() << " instead of brisk::Error: " << e.what();
    return;
  } catch (...) {
    ADD_FAILURE() << what << ": threw a non-std exception instead of brisk::Error";
    return;
  }
  ADD_FAILURE() << what << ": no exception";
}

void expectSameTensor(const c10::IValue& got, const at::Tensor& expected, const std::string& what) {
  ASSERT_TRUE(got.isTensor()) << what;
  EXPECT_TRUE(at::allclose(got.toTensor(), expected, 1e-5, 1e-5)) << what << ": the result changed";
}

Options withOption(const std::function<void(Options&)>& set) {
  Options o;
  set(o);
  return o;
}

// --- Model files ----------------------------------------------------------------------

TEST(ApiBadInput, BadModelFiles) {
  const std::string mlp = readBytes(testing::zooModel("mlp"));
  const std::string pt2 = readBytes(testing::zooFile("mlp.pt2"));
  struct Case {
    const char* what;
    std::string path;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"missing file", "/nonexistent/model.pt", {"/nonexistent/model.pt", "does not exist"}},
      {"empty file", writeTmp("empty.pt", ""), {"empty.pt"}},
      {"text file", writeTmp("text.pt", "not a model\n"), {"text.pt"}},
      {"random bytes", writeTmp("noise.pt", std::string(4096, '\x5a')), {"noise.pt"}},
      {"truncated TorchScript", writeTmp("half.pt", mlp.substr(0, mlp.size() / 2)), {"half.pt"}},
      {"truncated PT2", writeTmp("half.pt2", pt2.substr(0, pt2.size() / 2)), {"half.pt2"}},
      {"zip header only", writeTmp("zip.pt", mlp.substr(0, 64)), {"zip.pt"}},
      {"a directory", tmpDir(), {tmpDir(), "directory"}},
      {"a character device", "/dev/zero", {"/dev/zero", "character device"}},
      {"an inputs file", testing::zooFile("mlp.inputs.pt"), {"mlp.inputs.pt"}},
  };
  for (const Case& c : cases) expectBriskError(c.what, [&] { Module::load(c.path); }, c.fragments);
}

// --- Run inputs -------------------------------------------------------------------------

// The zoo mlp takes x: Float[N, 256]. Bad calls on the TorchScript file and on both PT2
// IRs, then the Module still gives the first result.
void expectBadRunsRefused(const std::string& file, bool pt2) {
  SCOPED_TRACE(file);
  auto m = Module::load(testing::zooFile(file));
  const at::Tensor x = at::randn({1, 256});  // the PT2 mlp was exported with a static batch of 1
  const at::Tensor expected = m->run({x}).toTensor().clone();
  const std::string name = file;  // every message names the model file
  const at::Tensor list_elem = at::randn({3, 256});
  struct Case {
    const char* what;
    std::vector<c10::IValue> args;
    Kwargs kwargs;
    std::vector<std::string> fragments;
  };
  std::vector<Case> cases = {
      {"two inputs", {x, x}, {}, {name, "got 2"}},
      {"no inputs", {}, {}, {name}},
      {"an unknown keyword", {x}, {{"bogus", x}}, {name, "bogus"}},
      {"None for a tensor", {c10::IValue()}, {}, {name, "None"}},
      {"an int for a tensor", {int64_t{3}}, {}, {name, "Int"}},
      {"a list for a tensor", {c10::List<at::Tensor>({list_elem})}, {}, {name}},
      {"a string for a tensor", {std::string("x")}, {}, {name}},
      {"double dtype", {at::randn({1, 256}, at::kDouble)}, {}, {name, "Double"}},
      {"long dtype", {at::ones({1, 256}, at::kLong)}, {}, {name, "Long"}},
      {"rank 1", {at::randn({256})}, {}, {name}},
      {"rank 3", {at::randn({2, 3, 256})}, {}, {name}},
      // Caught by the node that needs the size (TorchScript: aten::linear; PT2: the
      // program's size check), which the message names.
      {"255 features", {at::randn({1, 255})}, {}, {name, "node #", "255"}},
      {"0 features", {at::randn({1, 0})}, {}, {name, "node #"}},
  };
  if (!pt2) cases.push_back({"x twice (positional and keyword)", {x}, {{"x", x}}, {name, "x"}});
  // The PT2 programs check their static sizes in a node of their own.
  if (pt2) cases.push_back({"batch 3 for a static batch of 1", {at::randn({3, 256})}, {}, {name, "static size", "node #"}});
  for (const Case& c : cases) {
    const at::Tensor before = c.args.empty() || !c.args[0].isTensor() ? at::Tensor() : c.args[0].toTensor().clone();
    expectBriskError(c.what, [&] { m->run(c.args, c.kwargs); }, c.fragments);
    if (before.defined()) EXPECT_TRUE(at::equal(before, c.args[0].toTensor())) << c.what << ": input changed";
    // runAsync reports a bad call through its future, never by throwing.
    c10::intrusive_ptr<c10::ivalue::Future> fut;
    try {
      fut = m->runAsync(c.args, c.kwargs);
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.what << ": runAsync threw " << typeid(e).name() << ": " << e.what();
    }
    if (fut) {
      ASSERT_TRUE(fut->completed()) << c.what;
      ASSERT_TRUE(fut->hasError()) << c.what << ": runAsync accepted it";
      expectBriskError(std::string(c.what) + " (runAsync's future)", [&] { std::rethrow_exception(fut->exception_ptr()); },
                       c.fragments);
    }
    expectSameTensor(m->run({x}), expected, std::string("after ") + c.what);
  }
  // A caller-owned Runtime refuses the same way and stays usable.
  auto rt = m->createRuntime();
  expectBriskError("Runtime::run with None", [&] { rt->run({c10::IValue()}); }, {name, "None"});
  expectBriskError("Runtime::run with 255 features", [&] { rt->run({at::randn({1, 255})}); }, {name, "node #", "255"});
  expectSameTensor(rt->run({x}), expected, "Runtime::run after errors");
}

TEST(ApiBadInput, RunInputsTorchScript) { expectBadRunsRefused("mlp.pt", false); }
TEST(ApiBadInput, RunInputsPt2) { expectBadRunsRefused("mlp.pt2", true); }
TEST(ApiBadInput, RunInputsPt2CoreIR) { expectBadRunsRefused("mlp.core.pt2", true); }

// --- Options ----------------------------------------------------------------------------

TEST(ApiBadInput, OutOfRangeAndUnknownOptions) {
  const std::string mlp = testing::zooModel("mlp");
  const std::string pt2 = testing::zooFile("mlp.pt2");
  struct Case {
    const char* what;
    std::string path;
    Options options;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"intra_op_threads 100000", mlp, withOption([](Options& o) { o.intra_op_threads = 100000; }),
       {mlp, "intra_op_threads", "must be in"}},
      {"intra_op_threads -1", mlp, withOption([](Options& o) { o.intra_op_threads = -1; }),
       {mlp, "intra_op_threads", "must be in"}},
      {"inter_op_threads -5", mlp, withOption([](Options& o) { o.inter_op_threads = -5; }),
       {mlp, "inter_op_threads", "must be in"}},
      {"max_parallel_ops 0", mlp, withOption([](Options& o) { o.max_parallel_ops = 0; }),
       {mlp, "max_parallel_ops", "must be in"}},
      {"max_parallel_ops -3", pt2, withOption([](Options& o) { o.max_parallel_ops = -3; }),
       {pt2, "max_parallel_ops", "must be in"}},
      {"max_runtimes SIZE_MAX", mlp,
       withOption([](Options& o) { o.max_runtimes = std::numeric_limits<size_t>::max(); }),
       {mlp, "max_runtimes", "must be in"}},
      {"runtime_idle_ms -1", mlp, withOption([](Options& o) { o.runtime_idle_ms = -1; }),
       {mlp, "runtime_idle_ms", "must be in"}},
      {"plugin option of the wrong type", mlp,
       withOption([](Options& o) { o.plugin_options["ops_cpu.small_gemm"] = std::string("maybe"); }),
       {mlp, "ops_cpu.small_gemm"}},
      {"plugin option int for a bool", mlp,
       withOption([](Options& o) { o.plugin_options["ops_cpu.small_gemm"] = int64_t{7}; }),
       {mlp, "ops_cpu.small_gemm"}},
      {"unknown plugin option", mlp, withOption([](Options& o) { o.plugin_options["ops_cpu.no_such"] = true; }),
       {mlp, "ops_cpu.no_such"}},
      {"plugin option of no plugin", mlp, withOption([](Options& o) { o.plugin_options["nobody.flag"] = true; }),
       {mlp, "nobody.flag"}},
      {"unknown disabled pass", mlp, withOption([](Options& o) { o.disabled_passes = {"no_such_pass"}; }),
       {mlp, "no_such_pass"}},
      {"own_constant_outputs disabled", mlp,
       withOption([](Options& o) { o.disabled_passes = {"own_constant_outputs"}; }),
       {mlp, "own_constant_outputs"}},
      {"unknown planner", mlp, withOption([](Options& o) { o.planner = "no_such_planner"; }),
       {mlp, "no_such_planner"}},
      {"unknown delegate", mlp, withOption([](Options& o) { o.delegates = {"no_such_backend"}; }),
       {mlp, "no_such_backend"}},
      {"unknown pt2_program", pt2, withOption([](Options& o) { o.pt2_program = "bogus"; }), {pt2, "bogus"}},
      {"pt2_program on a TorchScript file", mlp, withOption([](Options& o) { o.pt2_program = "bogus"; }),
       {mlp, "pt2_program 'bogus'"}},
  };
  for (const Case& c : cases) expectBriskError(c.what, [&] { Module::load(c.path, c.options); }, c.fragments);
}

TEST(ApiBadInput, BadPlugins) {
  const std::string mlp = testing::zooModel("mlp");
  const std::string text = writeTmp("libbrisk_text.so", "this is not a shared object\n");
  const std::string empty = writeTmp("libbrisk_empty.so", "");
  // An ELF header and nothing else: past the magic, the headers it names are missing.
  const std::string elf_head = writeTmp(
      "libbrisk_head.so", readBytes(testing::runfile("ops_cpu/libbrisk_ops_cpu.so")).substr(0, 64));
  struct Case {
    const char* what;
    std::vector<std::string> plugins;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"missing plugin path", {"/nonexistent/libbrisk_x.so"}, {mlp, "/nonexistent/libbrisk_x.so", "not found"}},
      {"unknown plugin name", {"no_such_plugin"}, {mlp, "no_such_plugin", "not found"}},
      {"a text file", {text}, {mlp, "libbrisk_text.so"}},
      {"an empty file", {empty}, {mlp, "libbrisk_empty.so"}},
      {"an ELF header only", {elf_head}, {mlp, "libbrisk_head.so"}},
      {"a directory", {tmpDir() + "/"}, {mlp, tmpDir()}},
  };
  for (const Case& c : cases) {
    Options o;
    o.plugins = c.plugins;
    expectBriskError(c.what, [&] { Module::load(mlp, o); }, c.fragments);
  }
}

// --- swapWeights ------------------------------------------------------------------------

void expectBadSwapsRefused(const std::string& file) {
  SCOPED_TRACE(file);
  const std::string path = testing::zooFile(file);
  auto m = Module::load(path);
  const at::Tensor x = at::randn({1, 256});
  const at::Tensor expected = m->run({x}).toTensor().clone();
  struct Case {
    const char* what;
    WeightMap weights;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"unknown name", {{"fc9.weight", at::zeros({1})}}, {file, "fc9.weight"}},
      {"wrong shape", {{"fc1.weight", at::zeros({256, 512})}}, {file, "fc1.weight"}},
      {"wrong dtype", {{"fc1.weight", at::zeros({512, 256}, at::kDouble)}}, {file, "fc1.weight", "Double"}},
      {"undefined tensor", {{"fc1.weight", at::Tensor()}}, {file, "fc1.weight"}},
      // Once threw c10::Error from clone() of a sparse tensor (core/frontend/weights.cc).
      {"sparse tensor", {{"fc1.weight", at::zeros({512, 256}).to_sparse()}}, {file, "fc1.weight", "Sparse"}},
      {"one good, one bad", {{"fc1.bias", at::zeros({512})}, {"fc9.bias", at::zeros({1})}}, {file, "fc9.bias"}},
  };
  for (const Case& c : cases) {
    expectBriskError(c.what, [&] { m->swapWeights(c.weights); }, c.fragments);
    EXPECT_EQ(m->weightsVersion(), 0u) << c.what;
    expectSameTensor(m->run({x}), expected, std::string("after a refused swap: ") + c.what);
  }
  const std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      {testing::zooModel("resnet18"), {file, "no weight named"}},
      // These once named only the weights file, not the model (core/executor/module.cc).
      {"/nonexistent/weights.pt", {file, "/nonexistent/weights.pt", "does not exist"}},
      {tmpDir(), {file, tmpDir(), "directory"}},
      {writeTmp("weights.txt", "no weights here"), {file, "weights.txt"}},
  };
  for (const auto& [source, fragments] : files) {
    expectBriskError("swapWeightsFrom " + source, [&] { m->swapWeightsFrom(source); }, fragments);
    EXPECT_EQ(m->weightsVersion(), 0u) << source;
    expectSameTensor(m->run({x}), expected, "after a refused swapWeightsFrom " + source);
  }
}

TEST(ApiBadInput, SwapWeightsTorchScript) { expectBadSwapsRefused("mlp.pt"); }
TEST(ApiBadInput, SwapWeightsPt2) { expectBadSwapsRefused("mlp.pt2"); }

}  // namespace
}  // namespace brisk
