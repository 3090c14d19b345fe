// Bad input gets a brisk::Error whose one-line message names the model (and the node,
// op or argument), never a crash: missing file, not TorchScript, truncated archive,
// wrong input count/type/dtype/rank, bad kwargs, an op nothing can run, and a kernel
// failure at run time. The Runtime stays usable after an error.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <limits>

#include "core/common/error.h"
#include "core/graph/graph.h"
#include "core/frontend/model_inputs.h"
#include "core/executor/module.h"
#include "core/kernels/kernel_registry.h"
#include "core/kernels/plugin_loader.h"
#include "core/executor/runtime.h"
#include "tests/testing/model_check.h"

namespace brisk {
namespace {

using testing::errorOf;

void expectContains(const std::string& text, const std::vector<std::string>& parts) {
  for (const auto& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' not in: " << text;
}

std::string tmpFile(const std::string& name, const std::string& contents) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

TEST(Errors, MissingFile) {
  expectContains(errorOf([] { Module::load("/nonexistent/model.pt"); }),
                 {"model '/nonexistent/model.pt'", "model file", "does not exist"});
}

TEST(Errors, NotTorchScript) {
  std::string path = tmpFile("text.pt", "this is not a model\n");
  expectContains(errorOf([&] { Module::load(path); }), {"text.pt", "not a loadable TorchScript archive"});
  // A torch.save'd inputs file is a zip archive, but not a TorchScript module.
  expectContains(errorOf([] { Module::load(testing::zooFile("mlp.inputs.pt")); }),
                 {"mlp.inputs.pt", "TorchScript"});
}

TEST(Errors, TruncatedArchive) {
  std::string full = readFile(testing::zooModel("mlp"));
  ASSERT_GT(full.size(), 1000u);
  for (size_t keep : {full.size() / 2, full.size() - 100, size_t{64}}) {
    std::string path = tmpFile("truncated.pt", full.substr(0, keep));
    expectContains(errorOf([&] { Module::load(path); }), {"truncated.pt", "TorchScript"});
  }
}

TEST(Errors, WrongInputs) {
  auto m = Module::load(testing::zooModel("mlp"));
  at::Tensor good = at::randn({1, 256});
  expectContains(errorOf([&] { m->run({good, good}); }), {"mlp.pt", "expected at most 1 inputs", "got 2"});
  expectContains(errorOf([&] { m->run({}); }), {"mlp.pt", "missing input 'x'"});
  expectContains(errorOf([&] { m->run({int64_t{3}}); }), {"input 'x' (#0)", "expected Tensor", "got Int"});
  m->run({good});  // fixes dtype float and rank 2
  expectContains(errorOf([&] { m->run({at::randn({256})}); }),
                 {"input 'x' (#0)", "expected a Float tensor of rank 2", "rank 1"});
  expectContains(errorOf([&] { m->run({at::ones({1, 256}, at::kLong)}); }),
                 {"input 'x' (#0)", "expected a Float tensor", "Long tensor"});
  // Still usable, and other batch sizes are fine.
  EXPECT_EQ(m->run({at::randn({5, 256})}).toTensor().size(0), 5);
}

TEST(Errors, Kwargs) {
  auto m = Module::load(testing::zooModel("multi_output"));
  at::Tensor x = at::randn({2, 8});
  expectContains(errorOf([&] { m->run({x}, {{"nope", x}}); }), {"unknown keyword input 'nope'"});
  expectContains(errorOf([&] { m->run({x}, {{"x", x}}); }), {"'x' given both positionally and as a keyword"});
  expectContains(errorOf([&] { m->run({x}, {{"scale", std::string("big")}}); }),
                 {"input 'scale'", "expected float"});
  // Defaults and kwargs in any order work.
  auto a = m->run({x}, {{"scale", 3.0}, {"y", x}});
  auto b = m->run({x, x, 3.0});
  EXPECT_TRUE(a.toTupleRef().elements()[0].toTensor().equal(b.toTupleRef().elements()[0].toTensor()));
}

TEST(Errors, OpWithNoKernel) {
  // The JIT's own passes refuse unknown ops in IR text, so build the graph directly:
  // a node with no registered kernel and no JIT operator to fall back to.
  auto g = std::make_shared<Graph>("unknown-op");
  Value* x = g->top()->addParam(c10::TensorType::get(), "x");
  Node* n = g->top()->appendNode({"brisk_test::no_such_op", "", nullptr, {x}, {{c10::TensorType::get(), "y"}}});
  g->top()->addReturn(n->output(0));
  g->finalize();
  Signature sig("unknown-op", {Argument{"x", c10::TensorType::get(), std::nullopt}});
  expectContains(errorOf([&] { Module::fromGraph(g, std::move(sig), Options{}, nullptr); }),
                 {"model 'unknown-op'", "node #0 brisk_test::no_such_op", "op brisk_test::no_such_op",
                  "no kernel and no fallback"});
}

TEST(Errors, KernelFailureNamesNodeAndRuntimeRecovers) {
  const char* ir = R"IR(
graph(%a : Tensor, %b : Tensor):
  %c : Tensor = aten::mm(%a, %b)
  %d : Tensor = aten::relu(%c)
  return (%d)
)IR";
  auto m = Module::fromIR(ir, Options{}, "mm-model");
  auto rt = m->createRuntime();
  expectContains(errorOf([&] { rt->run({at::randn({2, 3}), at::randn({4, 5})}); }),
                 {"model 'mm-model'", "node #0 aten::mm", "op aten::mm", "cannot be multiplied"});
  at::Tensor a = at::randn({2, 3}), b = at::randn({3, 5});
  EXPECT_TRUE(rt->run({a, b}).toTensor().allclose(at::relu(at::mm(a, b))));
}

// Paths that exist but are no regular file: opening a FIFO blocks and /dev/zero never
// ends, so each must be refused by kind before anything opens it (they used to hang or
// be reported as "not found").
TEST(Errors, PathsThatAreNotFiles) {
  const std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string fifo = dir + "/model.fifo", loop_a = dir + "/loop_a.pt", loop_b = dir + "/loop_b.pt";
  ::unlink(fifo.c_str());
  ::unlink(loop_a.c_str());
  ::unlink(loop_b.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::symlink(loop_b.c_str(), loop_a.c_str()), 0);
  ASSERT_EQ(::symlink(loop_a.c_str(), loop_b.c_str()), 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {fifo, "FIFO"}, {"/dev/zero", "character device"}, {loop_a, "symbolic link loop"}, {dir, "directory"}};
  for (const auto& [path, kind] : cases) {
    expectContains(errorOf([&] { Module::load(path); }), {"model '" + path + "'", kind});
    expectContains(errorOf([&] { loadInputs(path); }), {"inputs file '" + path + "'", kind});
  }
  Registries registries;
  expectContains(errorOf([&] { loadPlugin(dir, {}, registries); }), {"plugin '" + dir + "'", "directory"});
  expectContains(errorOf([&] { loadPlugin(fifo, {}, registries); }), {"FIFO"});
}

// Every numeric option has a range; values outside it (including ones that would wrap
// when narrowed to the field's type) are one clear error naming the range.
TEST(Errors, OptionsOutOfRange) {
  const char* ir = R"IR(
graph(%a : Tensor):
  %b : Tensor = aten::relu(%a)
  return (%b)
)IR";
  std::vector<std::pair<std::function<void(Options&)>, std::vector<std::string>>> cases = {
      {[](Options& o) { o.intra_op_threads = 100000; }, {"intra_op_threads", "[0, 1024]", "100000"}},
      {[](Options& o) { o.intra_op_threads = -1; }, {"intra_op_threads", "[0, 1024]"}},
      {[](Options& o) { o.inter_op_threads = std::numeric_limits<int>::max(); }, {"inter_op_threads", "[0, 1024]"}},
      {[](Options& o) { o.max_parallel_ops = 0; }, {"max_parallel_ops", "[1, 1024]"}},
      {[](Options& o) { o.runtime_idle_ms = -5; }, {"runtime_idle_ms", "[0, 604800000]"}},
      {[](Options& o) { o.max_runtimes = std::numeric_limits<size_t>::max(); }, {"max_runtimes", "[0, 65536]"}},
  };
  for (auto& [set, parts] : cases) {
    Options o;
    set(o);
    parts.push_back("model 'bad-options'");
    expectContains(errorOf([&] { Module::fromIR(ir, o, "bad-options"); }), parts);
  }
  Options o;
  o.intra_op_threads = 100000;
  expectContains(errorOf([&] { Module::load(testing::zooModel("mlp"), o); }), {"mlp.pt", "intra_op_threads"});
}

// None (or an undefined tensor from C++) where the model declares a Tensor is refused at
// the boundary, not handed to a kernel that asserts on it.
TEST(Errors, NoneForTensor) {
  auto m = Module::load(testing::zooModel("mlp"));
  expectContains(errorOf([&] { m->run({c10::IValue()}); }), {"input 'x' (#0)", "expected Tensor", "got None"});
  expectContains(errorOf([&] { m->run({at::Tensor()}); }), {"input 'x' (#0)", "expected Tensor", "undefined tensor"});
  EXPECT_EQ(m->run({at::randn({2, 256})}).toTensor().size(0), 2);
}

// An undefined tensor inside a container input (a None leaf of a pytree from Python)
// is named by its path, not found later by a kernel as "rank 1" or "dim 0 is 0".
TEST(Errors, UndefinedTensorInsideAContainerInput) {
  auto m = Module::load(testing::zooFile("pytree_io.pt2"));
  auto r = [] { return at::randn({2, 8}); };
  auto feats = [&](at::Tensor y) {
    c10::Dict<std::string, at::Tensor> d;
    d.insert("x", r());
    d.insert("y", std::move(y));
    return d;
  };
  c10::Dict<std::string, at::Tensor> extra;
  extra.insert("bias", at::randn({8}));
  const Kwargs kwargs{{"scale", at::randn({1})}, {"extra", extra}};
  m->run({feats(r()), c10::ivalue::Tuple::create({r(), r()})}, kwargs);  // the valid call runs
  expectContains(errorOf([&] { m->run({feats(at::Tensor()), c10::ivalue::Tuple::create({r(), r()})}, kwargs); }),
                 {"pytree_io.pt2", "input 'feats' (#0): feats['y'] must be Tensor, got None (an undefined tensor)"});
  expectContains(errorOf([&] { m->run({feats(r()), c10::ivalue::Tuple::create({r(), at::Tensor()})}, kwargs); }),
                 {"input 'pair' (#1): pair[1] must be Tensor, got None"});
}

TEST(Errors, BadInputsFile) {
  expectContains(errorOf([] { loadInputs("/nonexistent/x.inputs.pt"); }), {"x.inputs.pt", "does not exist"});
  std::string path = tmpFile("bad.inputs.pt", "garbage");
  expectContains(errorOf([&] { loadInputs(path); }), {"bad.inputs.pt", "not a torch.save inputs file"});
  // A bare pickle: torch.save(..., _use_new_zipfile_serialization=False).
  std::string legacy = tmpFile("legacy.inputs.pt", std::string("\x80\x02}q\x00.", 6));
  expectContains(errorOf([&] { loadInputs(legacy); }), {"legacy.inputs.pt", "legacy format"});
}

}  // namespace
}  // namespace brisk
