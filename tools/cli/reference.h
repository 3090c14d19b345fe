#pragma once
// What `run --check` and `bench` judge brisk's output against.
//
// A TorchScript model: the TorchScript interpreter on the same file. A PT2 archive: the
// interpreter on its TorchScript twin (<stem>.pt beside it, same weights; <stem> drops
// ".core"/".dyn": the zoo writes both from one module) when there is one. A user's own
// .pt2 (torch.export.save) has no twin, and PT2's own runtimes are not in this process:
// ep.module() is Python (tools/bench:compare runs it), NativeRT is not in PyPI's
// libtorch. Then the outputs tools/zoo/export_pt2.py saved from ep.module() for these
// inputs (<stem>.pt2.expected.pt, <stem>.pt2.inputs2.expected.pt) are the reference, or
// there is none and `why` says so.
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

#include "tools/cli/model_locator.h"
#include "tools/ivalue_compare.h"

namespace brisk::cli {

struct Reference {
  enum class Kind { kInterpreter, kSavedOutputs, kNone };
  Kind kind = Kind::kNone;
  std::string path;  // kInterpreter: the TorchScript file; kSavedOutputs: the saved outputs file
  // Not kInterpreter: why the interpreter is not the reference, one line, e.g.
  // "no TorchScript twin /z/m.pt: PT2 references come from ep.module() in tools/bench:compare".
  std::string no_interpreter;
  std::string why_none;  // kNone: why there are no saved outputs either, one line
};

// The reference of `model` run on the inputs file `inputs_path`. Never throws for a
// missing reference (kNone says why); the caller decides whether that is an error.
Reference findReference(const ModelLocation& model, const std::string& inputs_path);

// The TorchScript twin's path for a PT2 archive (whether it exists or not).
std::string torchScriptTwin(const std::string& pt2_path);

// The saved ep.module() outputs of export_pt2.py for a PT2 archive run on
// `inputs_path`: "<stem>.pt2[.inputs2].expected.pt" when `inputs_path` is the archive's
// own inputs file (or inputs2), else "" (no file can hold outputs for other inputs).
std::string savedOutputsPath(const std::string& pt2_path, const std::string& inputs_path);

// What brisk's output is compared with, for messages: "the TorchScript interpreter",
// "ep.module()'s saved outputs", or "" for kNone.
std::string referenceName(const Reference& ref);

// Reads a saved outputs file (jit_pickle.save / torch.save with pickle protocol 2),
// checked like an inputs file before torch unpickles it. Throws brisk::Error naming it.
c10::IValue loadSavedOutputs(const std::string& path);

// How close brisk's output must come to the fp32 reference: the fp32 tolerance, or with
// a reduced precision asked for (Options::precision), 5% of each output's largest
// magnitude, the bound tools/bench:compare holds every reduced-precision row to.
Tolerance checkTolerance(const std::vector<std::string>& precision);
// " (precision bf16: within 5% of the output's largest magnitude)", or "" for fp32.
std::string toleranceNote(const std::vector<std::string>& precision);

}  // namespace brisk::cli
