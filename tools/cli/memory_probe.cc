#include "tools/cli/memory_probe.h"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "core/common/error.h"
#include "core/common/self_paths.h"
#include "core/executor/module.h"
#include "core/frontend/pt2/pt2.h"
#include "tools/cli/commands.h"
#include "tools/cli/common.h"
#include "tools/cli/format.h"
#include "tools/cli/reference.h"
#include "tools/jit_reference.h"

namespace brisk::cli {

// --- flags --------------------------------------------------------------------------

void MemoryBenchFlags::addTo(FlagParser& p) {
  p.addBool("memory", &memory,
            "also measure peak RSS increase over the loaded model, brisk vs the interpreter, each in its own process");
  p.addInt("memory-runs", &memory_runs, "N", "processes per executor for --memory (default 3; medians reported)", 1,
           1000);
  p.addInt("memory-iters", &memory_iters, "N", "inferences per --memory process (default 5)", 2, 1000000);
  p.addBool("compare-planning", &compare_planning,
            "also time (and with --memory, measure) brisk without memory planning");
  p.addInt("batch", &batch, "N", "use the bundled <model>.b<N>.inputs.pt (resnet18, mobilenet_v2: 8)", 1,
           4096);
}

void MemoryBenchFlags::addHidden(FlagParser& p) {
  p.addString("memory-probe-child", &child, "EXECUTOR", "");
}

std::string MemoryBenchFlags::inputsFlag(const ModelLocation& model, const std::string& inputs_flag) const {
  if (batch <= 0) return inputs_flag;
  if (!inputs_flag.empty()) throw UsageError("--batch and --inputs are exclusive");
  const std::string base = defaultInputsPath(model.path);  // <dir>/<name>.inputs.pt
  const std::string stem = base.substr(0, base.size() - std::strlen(".inputs.pt"));
  const std::string path = stem + ".b" + std::to_string(batch) + ".inputs.pt";
  if (isRegularFile(path)) return path;
  // Name the batch sizes that do exist next to the model.
  std::string dir = ".", name = stem;
  if (size_t slash = stem.rfind('/'); slash != std::string::npos) {
    dir = stem.substr(0, slash);
    name = stem.substr(slash + 1);
  }
  std::vector<std::string> found;
  if (DIR* d = ::opendir(dir.c_str())) {
    const std::string prefix = name + ".b", suffix = ".inputs.pt";
    while (dirent* e = ::readdir(d)) {
      std::string f = e->d_name;
      if (f.size() > prefix.size() + suffix.size() && f.compare(0, prefix.size(), prefix) == 0 &&
          f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0)
        found.push_back(f.substr(prefix.size(), f.size() - prefix.size() - suffix.size()));
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  const std::string have = join(found, ", ");
  throw Error("no batch-" + std::to_string(batch) + " inputs for " + model.name + " (looked for " + path + "; " +
              (have.empty() ? std::string("no batch sizes bundled") : "bundled batch sizes: " + have) + ")");
}

// --- /proc -----------------------------------------------------------------------------

namespace {

// A "VmXXX:   123 kB" field of /proc/self/status, in bytes.
size_t statusField(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(f, line)) {
    if (line.compare(0, n, key) == 0 && line.size() > n && line[n] == ':') {
      std::istringstream is(line.substr(n + 1));
      size_t kib = 0;
      is >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

}  // namespace

size_t currentRss() { return statusField("VmRSS"); }
size_t peakRss() { return statusField("VmHWM"); }

bool resetPeakRss() {
  // "5" resets the peak resident set size (VmHWM) to the current RSS (proc(5)).
  int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, "5", 1) == 1;
  ::close(fd);
  return ok;
}

// --- child -----------------------------------------------------------------------------

int memoryProbeChild(const std::string& executor, const std::string& model_path, const ModelInputs& inputs,
                     const Options& options, int64_t iters) {
  std::function<void()> run;
  std::shared_ptr<Module> module;
  std::unique_ptr<JitReference> ref;
  ModelInputs brisk_inputs = inputs;  // as the signature types them
  if (executor == kProbeBrisk || executor == kProbeBriskNoPlanning) {
    Options o = options;
    if (executor == kProbeBriskNoPlanning) o.memory_planning = false;
    module = Module::load(model_path, o);
    const std::shared_ptr<const CompiledModule> compiled = module->compiled();
    coerceToSignature(brisk_inputs, compiled->signature());
    run = [&] { (void)module->run(brisk_inputs.args, brisk_inputs.kwargs); };
  } else if (executor == kProbeInterpreter) {
    // The parent asks for this child only when the model has an interpreter reference.
    const std::string ts = isPt2Archive(model_path) ? torchScriptTwin(model_path) : model_path;
    ref = std::make_unique<JitReference>(ts, options.optimize_numerics);
    run = [&] { (void)ref->run(inputs); };
  } else {
    throw UsageError("--memory-probe-child: unknown executor '" + executor + "' (brisk, brisk_no_planning, interpreter)");
  }
  if (iters < 2) iters = 2;
  // Freed load-time heap would otherwise absorb (and hide) the runs' allocations.
  ::malloc_trim(0);
  if (!resetPeakRss()) throw Error("cannot reset the peak RSS (/proc/self/clear_refs); memory probe unavailable");
  const size_t baseline = currentRss();
  run();
  const size_t first = peakRss();
  resetPeakRss();
  for (int64_t i = 1; i < iters; ++i) run();
  const size_t steady = peakRss();
  const size_t end = currentRss();
  auto over = [&](size_t v) { return v > baseline ? (v - baseline) / 1024 : 0; };
  std::cout << "memory-probe: executor=" << executor << " baseline_kib=" << baseline / 1024
            << " first_kib=" << over(first) << " steady_kib=" << over(steady) << " end_kib=" << over(end)
            << " iters=" << iters << std::endl;
  return kExitOk;
}

// --- parent ----------------------------------------------------------------------------

namespace {

// Runs argv (argv[0] = path) with stdout captured; stderr is inherited, so a failing
// child's one-line error reaches the user. Returns the exit status (-1: signal).
int runCaptured(const std::vector<std::string>& argv, std::string& out) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(std::string("memory probe: pipe: ") + std::strerror(errno));
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("memory probe: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec (the parent has threads).
    ::dup2(fds[1], STDOUT_FILENO);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

size_t field(const std::map<std::string, std::string>& kv, const std::string& key, const std::string& line) {
  auto it = kv.find(key);
  if (it == kv.end()) throw Error("memory probe: no " + key + " in the child's line: " + line);
  return static_cast<size_t>(std::stoull(it->second));
}
}  // namespace

MemorySample probeMemoryInChild(const std::string& exe, const std::vector<std::string>& bench_args,
                                const std::string& executor) {
  std::vector<std::string> argv{exe, "bench"};
  argv.insert(argv.end(), bench_args.begin(), bench_args.end());
  argv.push_back("--memory-probe-child");
  argv.push_back(executor);
  std::string out;
  const int rc = runCaptured(argv, out);
  std::string line;
  std::istringstream is(out);
  for (std::string l; std::getline(is, l);)
    if (l.rfind("memory-probe: ", 0) == 0) line = l;
  if (rc != 0 || line.empty())
    throw Error("memory probe for " + executor + " failed (child exit status " + std::to_string(rc) + ")");
  std::map<std::string, std::string> kv;
  std::istringstream ls(line.substr(std::strlen("memory-probe: ")));
  for (std::string tok; ls >> tok;)
    if (size_t eq = tok.find('='); eq != std::string::npos) kv[tok.substr(0, eq)] = tok.substr(eq + 1);
  MemorySample s;
  s.baseline = field(kv, "baseline_kib", line) * 1024;
  s.first_peak = field(kv, "first_kib", line) * 1024;
  s.steady_peak = field(kv, "steady_kib", line) * 1024;
  s.end = field(kv, "end_kib", line) * 1024;
  return s;
}

}  // namespace brisk::cli
