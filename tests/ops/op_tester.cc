#include "tests/ops/op_tester.h"

#include <algorithm>

#include <gtest/gtest.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/irparser.h>

#include <cmath>
#include <cstring>

#include "core/graph/graph.h"
#include "core/frontend/model_inputs.h"
#include "core/executor/module.h"
#include "core/executor/runtime.h"

namespace brisk::testing {
namespace {

c10::IValue runReference(torch::jit::GraphFunction& fn, const std::vector<c10::IValue>& in) {
  at::AutoGradMode no_grad(false);
  std::vector<c10::IValue> stack;
  for (const auto& v : in) stack.push_back(cloneInputs(ModelInputs{{v}, {}}).args[0]);
  fn.run(stack);
  if (stack.size() == 1) return stack[0];
  return c10::ivalue::Tuple::create(std::move(stack));
}

}  // namespace

std::string constTensorIR(const std::string& name, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  std::string dims;
  for (int64_t d : shape) {
    n *= d;
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  }
  return "  %" + name + "_n : int = prim::Constant[value=" + std::to_string(n) + "]()\n" + "  %" + name +
         "_s : int[] = prim::Constant[value=[" + dims + "]]()\n" + "  %" + name +
         "_none : NoneType = prim::Constant()\n" + "  %" + name + "_0 : Tensor = aten::arange(%" + name + "_n, %" +
         name + "_none, %" + name + "_none, %" + name + "_none, %" + name + "_none)\n" + "  %" + name +
         "_1 : Tensor = aten::reshape(%" + name + "_0, %" + name + "_s)\n" + "  %" + name + " : Tensor = aten::sin(%" +
         name + "_1)\n";
}

at::Tensor constTensorValue(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return at::sin(at::arange(n)).reshape(shape);
}

at::Tensor smallGemmReference(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  const int64_t k = w.size(1), n = w.size(0);
  at::Tensor x2 = x.reshape({-1, k}).contiguous();
  at::Tensor y = at::empty({x2.size(0), n});
  auto xa = x2.accessor<float, 2>();
  auto wa = w.accessor<float, 2>();
  auto ya = y.accessor<float, 2>();
  for (int64_t i = 0; i < x2.size(0); ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) acc = std::fma(xa[i][kk], wa[j][kk], acc);
      ya[i][j] = b.defined() ? acc + b[j].item<float>() : acc;
    }
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes.back() = n;
  return y.reshape(sizes);
}

bool bitEqual(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) return false;
  if (a.numel() == 0) return true;  // empty tensors may have no data pointer (memcmp's UB)
  return std::memcmp(a.contiguous().data_ptr(), b.contiguous().data_ptr(), a.numel() * a.element_size()) == 0;
}

std::optional<NodeKernelInfo> kernelInfo(const Module& m, const std::string& op) {
  for (NodeKernelInfo& info : m.kernelReport())
    if (info.op == op) return std::move(info);
  return std::nullopt;
}

std::string kernelDetail(const Module& m, const std::string& op) {
  const std::optional<NodeKernelInfo> info = kernelInfo(m, op);
  return info ? info->detail : "";
}

namespace {

// What a Module fixes at its first run (core/graph/signature.h): each tensor input's
// dtype and rank.
std::vector<std::pair<int, int64_t>> inputSignature(const std::vector<c10::IValue>& set) {
  std::vector<std::pair<int, int64_t>> s;
  for (const c10::IValue& v : set)
    if (v.isTensor()) s.emplace_back(static_cast<int>(v.toTensor().scalar_type()), v.toTensor().dim());
  return s;
}

}  // namespace

void OpTester::run() {
  // Consecutive input sets of one signature share a Module (and so exercise its
  // retained outputs); a set of another dtype or rank starts a Module of its own.
  size_t begin = 0;
  while (begin < input_sets_.size()) {
    size_t end = begin + 1;
    while (end < input_sets_.size() && inputSignature(input_sets_[end]) == inputSignature(input_sets_[begin])) ++end;
    SCOPED_TRACE("input sets " + std::to_string(begin) + " to " + std::to_string(end - 1));
    runSets(begin, end);
    begin = end;
  }
}

void OpTester::runSets(size_t begin, size_t end) {
  Options options = options_;
  options.use_delegates = options.use_delegates && delegates_;
  const bool has_ops_cpu =
      std::find(options.plugins.begin(), options.plugins.end(), "ops_cpu") != options.plugins.end();
  if (!fusion_ && has_ops_cpu) {
    options.disabled_passes.push_back("ops_cpu.fuse_pointwise");
    options.disabled_passes.push_back("ops_cpu.fuse_view_chain");
  }
  auto module = Module::fromIR(ir_, options, "op-test");
  for (const auto& [key, kind, outputs] : expected_) {
    bool found = false;
    for (const NodeKernelInfo& info : module->kernelReport()) {
      if (info.op != key) continue;
      found = true;
      EXPECT_EQ(kernelKindName(info.kind), std::string(kernelKindName(kind)))
          << key << " is served by " << info.provider << " (" << info.detail << ")";
      if (outputs)
        EXPECT_EQ(outputContractName(info.outputs), std::string(outputContractName(*outputs)))
            << key << " is served by " << info.provider << " (" << info.detail << ")";
    }
    EXPECT_TRUE(found) << "no node " << key << " in:\n" << module->compiled()->graph().str();
  }
  auto g = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(ir_, g.get());
  torch::jit::GraphFunction reference("reference", g, nullptr);
  auto runtime = module->createRuntime();
  for (int round = 0; round < 2; ++round) {
    for (size_t s = begin; s < end; ++s) {
      SCOPED_TRACE("input set " + std::to_string(s) + ", round " + std::to_string(round));
      const std::vector<c10::IValue>& in = input_sets_[s];
      ModelInputs pristine = cloneInputs(ModelInputs{in, {}});
      c10::IValue expected = runReference(reference, in);
      for (int rep = 0; rep < 2; ++rep) {
        c10::IValue actual = runtime->run(cloneInputs(ModelInputs{in, {}}).args);
        if (actual.isTuple() && !expected.isTuple() && actual.toTupleRef().elements().size() == 1)
          actual = actual.toTupleRef().elements()[0];
        EXPECT_EQ(compareIValues(actual, expected, tol_), "") << "rep " << rep;
      }
      // The same inputs object run directly must be left unchanged.
      std::vector<c10::IValue> shared = in;
      runtime->run(shared);
      EXPECT_EQ(compareIValues(c10::ivalue::Tuple::create(in), c10::ivalue::Tuple::create(pristine.args),
                               Tolerance{0, 0, 0}, "inputs"),
                "")
          << "the op modified its inputs";
    }
  }
}

}  // namespace brisk::testing
