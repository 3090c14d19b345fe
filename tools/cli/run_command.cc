// brisk run [MODEL] [--inputs FILE] [--check] [flags]
#include <iostream>

#include "core/common/error.h"
#include "core/frontend/model_inputs.h"
#include "core/report/format.h"
#include "core/report/module_stats.h"
#include "tools/cli/command_preamble.h"
#include "tools/cli/commands.h"
#include "tools/cli/common.h"
#include "tools/cli/options_flags.h"
#include "tools/cli/reference.h"
#include "tools/cli/settings.h"
#include "tools/cli/timing.h"
#include "tools/ivalue_compare.h"
#include "tools/jit_reference.h"

namespace brisk::cli {

using report::fixed;
using report::moduleStatsText;

namespace {

struct RunFlags {
  CommonFlags common;
  std::string inputs;
  bool check = false;
  bool help = false;

  void addOwn(FlagParser& p) {
    p.addString("inputs", &inputs, "FILE", "inputs file (default: the model's <model>.inputs.pt)");
    p.addBool("check", &check, "also compare with the TorchScript interpreter (a PT2 archive: on its TorchScript twin <stem>.pt, else with "
                "ep.module()'s outputs saved beside it as <stem>.pt2.expected.pt); exit 1 if different");
  }
  void addAll(FlagParser& p) {
    addOwn(p);
    common.addTo(p);
    p.addBool("help", &help, "show this help");
  }
};

}  // namespace

std::string runUsage(bool common) {
  return "brisk run [MODEL] [--inputs FILE] [--check] [flags]\n"
         "  Runs the model once on its inputs; prints the output's shapes and checksum and the\n"
         "  latency of that run.\n" +
         flagsUsage<RunFlags>(common);
}

int runCommand(const std::vector<std::string>& args) {
  RunFlags f;
  FlagParser parser;
  f.addAll(parser);
  const std::optional<std::vector<std::string>> positional = parseOrHelp(parser, args, f.help, runUsage);
  if (!positional) return kExitOk;
  applyCommonFlags(f.common, -1);
  const std::string model_arg = modelArg(*positional, "run");
  const Options options = f.common.options();

  const ModelLocation location = locateModel(model_arg);
  const std::string inputs_path = locateInputs(location, f.inputs);
  ModelInputs inputs = loadInputs(inputs_path);
  // The reference is found before anything runs: a --check that cannot be done is the
  // user's error (exit 2), not a run whose result is then left unchecked.
  const Reference ref = f.check ? findReference(location, inputs_path) : Reference{};
  if (f.check && ref.kind == Reference::Kind::kNone)
    throw Error("model " + location.path + ": cannot --check: " + ref.no_interpreter + "; " + ref.why_none);
  LoadedModel m = loadModel(location, options);
  const std::shared_ptr<const CompiledModule> compiled = m.module->compiled();
  coerceToSignature(inputs, compiled->signature());
  std::cout << "model: " << m.location.name << " (" << m.location.path << ")\n"
            << "inputs: " << inputs_path << "\n"
            << "loaded in " << fixed(m.load_ms, 1) << " ms: " << moduleStatsText(m.module->stats()) << "\n";

  ModelInputs brisk_inputs = f.check ? cloneInputs(inputs) : inputs;
  double t0 = nowSeconds();
  c10::IValue out = m.module->run(std::move(brisk_inputs.args), brisk_inputs.kwargs);
  double run_ms = (nowSeconds() - t0) * 1e3;
  std::cout << "output: " << summarizeIValue(out) << "\n"
            << "latency: " << fixed(run_ms, 3) << " ms (one run, the first)\n";
  std::cout.flush();

  if (!f.check) return kExitOk;
  c10::IValue expected;
  if (ref.kind == Reference::Kind::kInterpreter) {
    JitReference interpreter(ref.path, options.optimize_numerics);
    expected = runInterpreter(interpreter, inputs, m.location.path);
  } else {
    std::cout << "reference: " << ref.no_interpreter << "; checking against " << referenceName(ref) << " "
              << ref.path << "\n";
    expected = loadSavedOutputs(ref.path);
  }
  std::string diff = compareIValues(out, expected, checkTolerance(options.precision));
  if (diff.empty()) {
    std::cout << "check: matches " << referenceName(ref) << toleranceNote(options.precision) << "\n";
    return kExitOk;
  }
  std::cout << "check: DIFFERS from " << referenceName(ref) << ": " << diff << toleranceNote(options.precision) << "\n"
            << "reference output: " << summarizeIValue(expected) << "\n";
  return kExitMismatch;
}

}  // namespace brisk::cli
