#pragma once
// Declarative per-op tests: an IR snippet, input sets, the expected kernel kind.
//
//   OpTester("graph(%a : Tensor, %b : Tensor):\n"
//            "  %c : Tensor = aten::mul(%a, %b)\n"
//            "  return (%c)")
//       .inputs({at::randn({2, 3}), at::randn({2, 3})})
//       .inputs({at::randn({8, 5}), at::randn({8, 5})})   // larger: exercises resizing
//       .expectKernel("aten::mul.Tensor", KernelKind::kOutVariant)
//       .run();
//
// run() builds a brisk Module from the IR (default options: the ops_cpu plugin is
// loaded) and the TorchScript interpreter's function from the same IR, then for every
// input set, twice in a row (and the whole sequence twice, so outputs reused from a
// larger shape are exercised when shrinking), compares outputs and checks that inputs
// are unchanged. expectKernel() asserts which kernel kind served the op.
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/kernels/kernel.h"
#include "core/common/options.h"
#include "tools/ivalue_compare.h"

namespace brisk {
class Module;
struct NodeKernelInfo;
}

namespace brisk::testing {

// IR lines defining %<name> as a constant float tensor of `shape` (constant-folded by
// the frontend: sin(arange(numel)).reshape(shape)), for ops whose kernels treat frozen
// weights specially.
std::string constTensorIR(const std::string& name, const std::vector<int64_t>& shape);

// The value constTensorIR(name, shape) defines: sin(arange(numel)).reshape(shape).
at::Tensor constTensorValue(const std::vector<int64_t>& shape);

// x W^T + b for w [N, K] (b undefined or [N]) in small_gemm's documented order
// (ops_cpu/simd/small_gemm.h): +0, one fma per k ascending, then + b; fp32.
at::Tensor smallGemmReference(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b);

// Same sizes, dtype and bytes.
bool bitEqual(const at::Tensor& a, const at::Tensor& b);

// The kernel report entry of the first node `op` of `m`, if it has one.
std::optional<NodeKernelInfo> kernelInfo(const Module& m, const std::string& op);

// The detail of the kernel serving the first node `op` of `m` ("" when there is none).
std::string kernelDetail(const Module& m, const std::string& op);

class OpTester {
 public:
  explicit OpTester(std::string ir) : ir_(std::move(ir)) {}
  OpTester& inputs(std::vector<c10::IValue> in) {
    input_sets_.push_back(std::move(in));
    return *this;
  }
  OpTester& expectKernel(std::string op_key, KernelKind kind) {
    expected_.push_back(Expected{std::move(op_key), kind, std::nullopt});
    return *this;
  }
  // The same, and what the kernel does with its output's memory.
  OpTester& expectKernel(std::string op_key, KernelKind kind, OutputContract outputs) {
    expected_.push_back(Expected{std::move(op_key), kind, outputs});
    return *this;
  }
  OpTester& tolerance(Tolerance tol) {
    tol_ = tol;
    return *this;
  }
  OpTester& options(Options o) {
    options_ = std::move(o);
    return *this;
  }
  // Op tests check brisk's own kernels, so no delegate backend takes their node away
  // (whatever options() says) unless a test asks for the delegates.
  OpTester& withDelegates() {
    delegates_ = true;
    return *this;
  }
  // Likewise, elementwise fusion (ops_cpu.fuse_pointwise) and view chains
  // (ops_cpu.fuse_view_chain) would replace the ops under test by one fused node; they
  // stay off unless a test asks for them.
  OpTester& withFusion() {
    fusion_ = true;
    return *this;
  }
  // Consecutive input sets with the same tensor dtypes and ranks run on one Module (a
  // Module fixes those at its first run); each change of them starts another Module.
  void run();

 private:
  void runSets(size_t begin, size_t end);
  std::string ir_;
  std::vector<std::vector<c10::IValue>> input_sets_;
  struct Expected {
    std::string op_key;
    KernelKind kind;
    std::optional<OutputContract> outputs;
  };
  std::vector<Expected> expected_;
  Tolerance tol_{1e-5, 1e-6};
  Options options_;
  bool delegates_ = false;
  bool fusion_ = false;
};

}  // namespace brisk::testing
