// PT2 archives (torch.export) through Module::load: outputs against ep.module()'s,
// inputs left unchanged, repeated runs, program choice, structured inputs and outputs,
// and the errors for damaged archives and wrong inputs.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/common/error.h"
#include "core/executor/module.h"
#include "core/frontend/model_inputs.h"
#include "tests/pt2/pt2_check.h"

namespace brisk {
namespace {

using pt2_testing::expectLoadError;
using pt2_testing::expectMatchesExport;
using pt2_testing::program;
using pt2_testing::withProgram;

TEST(Pt2, MlpSavedWithTorchExportSave) { expectMatchesExport("mlp.pt2", "mlp", Options{}); }
TEST(Pt2, MlpCoreAten) { expectMatchesExport("mlp_core.pt2", "mlp_core", Options{}); }
TEST(Pt2, ConvBatchNormReluAddPool) { expectMatchesExport("convnet.pt2", "convnet", Options{}); }
TEST(Pt2, ConvNetCoreAtenMultiOutputNodes) { expectMatchesExport("convnet_core.pt2", "convnet_core", Options{}); }
// Exported at batch 5, run at batch 7: sym_size.int and _operator.mul run too.
TEST(Pt2, DynamicBatch) { expectMatchesExport("dynamic.pt2", "dynamic", Options{}); }
TEST(Pt2, StructuredInputsAndOutputs) { expectMatchesExport("structured.pt2", "structured", Options{}); }

TEST(Pt2, FallbackOnlyRunsThroughTheDispatcher) {
  Options o;
  o.fallback_only = true;
  expectMatchesExport("convnet.pt2", "convnet", o);
  expectMatchesExport("structured.pt2", "structured", o);
}

TEST(Pt2, WithoutPlugins) {
  Options o;
  o.plugins.clear();
  expectMatchesExport("mlp_core.pt2", "mlp_core", o);
}

TEST(Pt2, ProgramsChosenByName) {
  expectMatchesExport("multi.pt2", "mlp", withProgram("mlp"));
  expectMatchesExport("multi.pt2", "convnet", withProgram("convnet"));
}

TEST(Pt2Errors, SeveralProgramsNeedAName) {
  expectLoadError("multi.pt2", Options{}, {"multi.pt2", "several programs", "'convnet', 'mlp'"});
  expectLoadError("multi.pt2", withProgram("nope"), {"multi.pt2", "no program 'nope'", "'convnet', 'mlp'"});
}

TEST(Pt2Errors, BufferMutationIsRefused) {
  expectLoadError("counter.pt2", Options{}, {"counter.pt2", "program mutates buffer 'count': not supported"});
  expectLoadError("counter_core.pt2", Options{}, {"counter_core.pt2", "program mutates buffer 'count': not supported"});
}

TEST(Pt2Errors, InputsOutsideTheExportedShapes) {
  auto expectRunError = [](const std::string& file, at::Tensor x, const std::string& part) {
    auto module = Module::load(program(file), Options{});
    try {
      module->run({x}, {});
      ADD_FAILURE() << "ran";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expectRunError("dynamic.pt2", at::randn({65, 8}), "input 'x': dim 0 is 65, outside the program's range [1, 64]");
  expectRunError("dynamic.pt2", at::randn({5, 9}), "input 'x': dim 1 is 9, but the program was exported for 8");
  expectRunError("mlp.pt2", at::randn({4, 16, 1}), "input 'x': expected rank 2");
}

TEST(Pt2Errors, TruncatedArchive) { expectLoadError("truncated.pt2", Options{}, {"truncated.pt2", "PT2"}); }

TEST(Pt2Errors, UnknownSchemaVersion) {
  expectLoadError("schema99.pt2", Options{}, {"schema99.pt2", "schema version 99.", "major version 8"});
}

// PT2E's quantize / dequantize per tensor on core's one-pass kernels: the same bits as
// PyTorch's reference (the raw uint8 output among them), NCHW and channels-last inputs.
TEST(Pt2, QuantizeDequantizePerTensor) {
  expectMatchesExport("quantize_roundtrip.pt2", "quantize_roundtrip", Options{});
}

// PT2E's quantize / dequantize ops load (core/graph/quantized_decomposed.h); another op of
// that Python-only namespace is one error that says which ones brisk runs.
TEST(Pt2Errors, AQuantizedDecomposedOpBriskDoesNotRun) {
  expectLoadError("choose_qparams.pt2", Options{},
                  {"choose_qparams.pt2", "quantized_decomposed::choose_qparams.tensor",
                   "quantize / dequantize per tensor and per channel only"});
}

TEST(Pt2Errors, WrongInputStructure) {
  auto module = Module::load(program("structured.pt2"), Options{});
  ModelInputs in = loadInputs(program("structured.inputs.pt"));
  auto expectRunError = [&](std::vector<c10::IValue> args, const Kwargs& kwargs, const std::string& part) {
    try {
      module->run(std::move(args), kwargs);
      ADD_FAILURE() << "ran";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  std::vector<c10::IValue> args = in.args;
  args[1] = in.args[0];  // a tensor where the (a, b) tuple goes
  expectRunError(args, in.kwargs, "input 'pair'");
  expectRunError(in.args, {}, "missing input 'scale'");
  args = in.args;
  args[2] = in.args[1];  // a tuple where the dict goes
  expectRunError(args, in.kwargs, "input 'named'");
}

}  // namespace
}  // namespace brisk
