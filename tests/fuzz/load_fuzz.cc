#include "tests/fuzz/load_fuzz.h"

#include <fstream>
#include <iterator>
#include <typeinfo>

#include "core/archive_check.h"
#include "core/error.h"
#include "core/module.h"
#include "tests/fuzz/zip_archive.h"

namespace brisk::fuzz {
namespace {

std::string writeCaseFile(std::string_view bytes, FuzzTarget target, const FuzzContext& ctx) {
  std::string path = ctx.work_dir + (target == FuzzTarget::kModelArchive ? "/fuzz_case.pt" : "/fuzz_case.inputs.pt");
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("fuzz: cannot write " + path);
  return path;
}

// A brisk::Error is the documented outcome only if it is the one-line message that
// names the file, which the CLI prints as is.
void checkError(const Error& e, const std::string& path, const char* stage) {
  std::string msg = e.what();
  if (msg.find('\n') != std::string::npos)
    throw FuzzFinding(std::string(stage) + ": brisk::Error message is not one line: " + msg);
  if (msg.find(path) == std::string::npos)
    throw FuzzFinding(std::string(stage) + ": brisk::Error does not name the file " + path + ": " + msg);
}

// Anything but brisk::Error escaping from `fn` is a finding, reported with its type.
template <typename F>
void expectOnlyBriskErrors(const char* stage, F&& fn) {
  try {
    fn();
  } catch (const Error&) {
    throw;
  } catch (const FuzzFinding&) {
    throw;
  } catch (const std::exception& e) {
    throw FuzzFinding(std::string(stage) + ": " + typeid(e).name() + " escaped: " + oneLine(e.what()));
  } catch (...) {
    throw FuzzFinding(std::string(stage) + ": a non-std exception escaped");
  }
}

void runAll(const Module& m, const std::vector<c10::IValue>& args, const Kwargs& kwargs, FuzzOutcome& out) {
  try {
    expectOnlyBriskErrors("run", [&] { m.run(args, kwargs); });
    ++out.runs_ok;
  } catch (const Error&) {
    ++out.runs_refused;  // a model error at run time is reported this way by design
  }
}

// OPEN FINDINGS in core/model_inputs.cc (README.md): loadInputs hands the file to torch's
// pickle_load unchecked, so
//   1. a data.pkl nesting a value ~200000 levels deep overflows the stack (recursive
//      ~ListImpl) inside pickle_load: corpus/open/deep_nesting.inputs.pt;
//   2. a tensor whose storage record is empty or short loads, and the first kernel to
//      read it crashes: corpus/open/empty_tensor_record.inputs.pt;
//   3. c10::Error from IValue accessors escapes (`"kwargs": None` -> toGenericDict, a
//      non-string key -> toStringRef): corpus/open/kwargs_none.inputs.pt.
// The fix is for loadInputs to call pickleNestingDepth / checkTensorsFitStorage
// (core/archive_check.h). These checks run just before the crash would happen; delete
// them once loadInputs refuses such files itself.
void checkOpenInputsNesting(std::string_view bytes) {
  std::vector<ZipMember> members;
  try {
    members = readZip(bytes);
  } catch (const ZipError&) {
    return;
  }
  for (const ZipMember& m : members)
    if (m.name.size() >= 9 && m.name.compare(m.name.size() - 9, 9, "/data.pkl") == 0 &&
        pickleNestingDepth(m.data) > kMaxPickleNesting)
      throw OpenFinding("open finding (core/model_inputs.cc): data.pkl nests deeper than " +
                        std::to_string(kMaxPickleNesting) + " levels; pickle_load would overflow the stack");
}

void checkOpenInputsStorage(const ModelInputs& in, const std::string& path) {
  try {
    for (size_t i = 0; i < in.args.size(); ++i) checkTensorsFitStorage(in.args[i], path, "args[" + std::to_string(i) + "]");
    for (const auto& [k, v] : in.kwargs) checkTensorsFitStorage(v, path, "kwargs['" + k + "']");
  } catch (const Error& e) {
    throw OpenFinding(std::string("open finding (core/model_inputs.cc): loadInputs accepted it: ") + e.what());
  }
}

}  // namespace

const char* targetName(FuzzTarget t) { return t == FuzzTarget::kModelArchive ? "model" : "inputs"; }

FuzzOutcome runFuzzCase(std::string_view bytes, FuzzTarget target, const FuzzContext& ctx) {
  const std::string path = writeCaseFile(bytes, target, ctx);
  FuzzOutcome out;
  if (target == FuzzTarget::kModelArchive) {
    std::shared_ptr<Module> m;
    try {
      expectOnlyBriskErrors("Module::load", [&] { m = Module::load(path, ctx.options); });
    } catch (const Error& e) {
      checkError(e, path, "Module::load");
      out.error = e.what();
      return out;
    }
    out.loaded = true;
    for (const ModelInputs& in : ctx.inputs) runAll(*m, in.args, in.kwargs, out);
  } else {
    checkOpenInputsNesting(bytes);
    ModelInputs in;
    try {
      expectOnlyBriskErrors("loadInputs", [&] {
        try {
          in = loadInputs(path);
        } catch (const c10::Error& e) {
          throw OpenFinding("open finding (core/model_inputs.cc): c10::Error escaped loadInputs: " +
                            oneLine(e.what_without_backtrace()));
        }
      });
    } catch (const Error& e) {
      checkError(e, path, "loadInputs");
      out.error = e.what();
      return out;
    }
    out.loaded = true;
    checkOpenInputsStorage(in, path);
    for (const auto& m : ctx.models) runAll(*m, in.args, in.kwargs, out);
  }
  return out;
}

FuzzContext seedContext(const std::string& model_path, const std::string& inputs_path, const Options& options,
                        const std::string& work_dir) {
  FuzzContext ctx;
  ctx.work_dir = work_dir;
  ctx.options = options;
  ctx.models.push_back(Module::load(model_path, options));
  ctx.inputs.push_back(loadInputs(inputs_path));
  // One good run first: it fixes the seed Module's input dtypes and ranks (strict inputs),
  // as in a long-running server that has already served requests.
  ctx.models.back()->run(ctx.inputs.back().args, ctx.inputs.back().kwargs);
  return ctx;
}

std::string readFileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace brisk::fuzz
