#include "delegates/aoti/container.h"

#include <ATen/Context.h>
#include <ATen/DynamicLibrary.h>
#include <dlfcn.h>

#include <mutex>

#include "core/common/error.h"

namespace brisk::aoti {

void ensureLibtorchLoaded() {
  static std::once_flag once;
  static std::string problem;
  std::call_once(once, [] {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&at::globalContext), &info) || !info.dli_fname) {
      problem = "cannot find where libtorch_cpu.so was loaded from";
      return;
    }
    std::string dir = info.dli_fname;
    dir = dir.substr(0, dir.rfind('/') + 1);
    // RTLD_GLOBAL: the compiled library's own dependency on libtorch.so then resolves to it.
    if (!dlopen((dir + "libtorch.so").c_str(), RTLD_NOW | RTLD_GLOBAL))
      problem = std::string("cannot load libtorch.so, which AOTInductor libraries need: ") + dlerror();
  });
  if (!problem.empty()) throw Error(problem);
}

namespace {
void check(AOTIRuntimeError rc, const char* what) {
  if (rc != AOTI_RUNTIME_SUCCESS) throw Error(std::string("AOTInductor's ") + what + " failed");
}
}  // namespace

size_t Container::numInputs() const {
  auto fn = reinterpret_cast<decltype(&AOTInductorModelContainerGetNumInputs)>(
      model_so_->sym("AOTInductorModelContainerGetNumInputs"));
  size_t n = 0;
  check(fn(container_handle_, &n), "GetNumInputs");
  return n;
}

size_t Container::numOutputs() const {
  size_t n = 0;
  check(get_num_outputs_func_(container_handle_, &n), "GetNumOutputs");
  return n;
}

}  // namespace brisk::aoti
