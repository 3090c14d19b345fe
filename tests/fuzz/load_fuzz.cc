#include "tests/fuzz/load_fuzz.h"

// g++ defines __SANITIZE_ADDRESS__ under -fsanitize=address; clang reports it through
// __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define BRISK_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BRISK_FUZZ_ASAN 1
#endif
#endif
#ifdef BRISK_FUZZ_ASAN
#include <sanitizer/lsan_interface.h>
#endif

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <typeinfo>

#include "core/common/error.h"
#include "core/executor/module.h"

namespace brisk::fuzz {
namespace {

// Under LeakSanitizer (--config=asan, libFuzzer): while a mutated model loads, its
// allocations are not leak-checked. torch's TorchScript compiler leaks on its error paths
// (CompilationUnit <-> type reference cycles, half-built graphs) whenever damaged source
// fails to compile, thousands of times a run; brisk's own allocations outside loading
// (every run of a loaded model) stay checked.
struct TorchCompilerLeaksIgnored {
#ifdef BRISK_FUZZ_ASAN
  TorchCompilerLeaksIgnored() { __lsan_disable(); }
  ~TorchCompilerLeaksIgnored() { __lsan_enable(); }
#endif
};

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

}  // namespace

const char* targetName(FuzzTarget t) { return t == FuzzTarget::kModelArchive ? "model" : "inputs"; }

FuzzOutcome runFuzzCase(std::string_view bytes, FuzzTarget target, const FuzzContext& ctx) {
  const std::string path = writeCaseFile(bytes, target, ctx);
  FuzzOutcome out;
  if (target == FuzzTarget::kModelArchive) {
    std::shared_ptr<Module> m;
    try {
      expectOnlyBriskErrors("Module::load", [&] {
        TorchCompilerLeaksIgnored ignore;
        m = Module::load(path, ctx.options);
      });
    } catch (const Error& e) {
      checkError(e, path, "Module::load");
      out.error = e.what();
      return out;
    }
    out.loaded = true;
    for (const ModelInputs& in : ctx.inputs) runAll(*m, in.args, in.kwargs, out);
  } else {
    ModelInputs in;
    try {
      expectOnlyBriskErrors("loadInputs", [&] { in = loadInputs(path); });
    } catch (const Error& e) {
      checkError(e, path, "loadInputs");
      out.error = e.what();
      return out;
    }
    out.loaded = true;
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

std::string fuzzTmpDir() {
  const char* d = std::getenv("TEST_TMPDIR");
  return d ? d : "/tmp";
}

void saveCaseFile(const std::string& name, const std::string& bytes, const std::string& suffix) {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  std::string file = name;
  for (char& c : file)
    if (c == '/' || c == '#') c = '_';
  std::ofstream(std::string(dir ? dir : fuzzTmpDir().c_str()) + "/" + file + suffix, std::ios::binary) << bytes;
}

std::string readFileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace brisk::fuzz
