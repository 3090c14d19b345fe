#include "delegates/onednn/dnnl_runtime.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace brisk::onednn {

const dnnl::engine& cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

void checkLibrary() {
  const dnnl_version_t* v = dnnl_version();
  if (v->major == 3 && v->minor >= 2 && v->cpu_runtime == DNNL_RUNTIME_TBB) return;
  Dl_info info{};
  const std::string file = ::dladdr(reinterpret_cast<void*>(&dnnl_version), &info) && info.dli_fname
                               ? info.dli_fname
                               : "libdnnl.so.3";
  throw std::runtime_error(file + " is oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) +
                           (v->cpu_runtime == DNNL_RUNTIME_TBB ? "" : " without the TBB runtime") +
                           "; the onednn backend needs oneDNN 3.2 or later on TBB (tools/setup.sh installs it "
                           "at /opt/brisk/onednn)");
}

DnnlState::DnnlState() : stream_(cpuEngine()) {}
DnnlState::~DnnlState() = default;

void DnnlState::execute(const dnnl::primitive& p, const dnnl_exec_arg_t* args, int nargs) {
  const int threads = std::max(1, at::get_num_threads());
  if (threads != threads_) {
    arena_ = std::make_unique<tbb::task_arena>(threads);
    threads_ = threads;
  }
  dnnl_status_t status = dnnl_success;
  // A CPU stream in order runs the primitive in this call; the wait makes "done when
  // execute returns" a guarantee rather than a property of the runtime.
  arena_->execute([&] {
    status = dnnl_primitive_execute(p.get(), stream_.get(), nargs, args);
    if (status == dnnl_success) status = dnnl_stream_wait(stream_.get());
  });
  if (status != dnnl_success)
    throw std::runtime_error("oneDNN primitive failed (dnnl_status " + std::to_string(static_cast<int>(status)) + ")");
}

dnnl::memory unboundMemory(const dnnl::memory::desc& md) {
  return dnnl::memory(md, cpuEngine(), DNNL_MEMORY_NONE);
}

dnnl::memory unboundScratchpad(size_t bytes) {
  return unboundMemory(dnnl::memory::desc({static_cast<int64_t>(bytes)}, dnnl::memory::data_type::u8,
                                          dnnl::memory::format_tag::a));
}

at::Tensor bufferFor(const dnnl::memory::desc& md, const at::Tensor& like) {
  return at::empty({static_cast<int64_t>(md.get_size())}, like.options().dtype(at::kByte));
}

at::Tensor scratchFor(size_t bytes, const at::Tensor& like) {
  return bytes ? at::empty({static_cast<int64_t>(bytes)}, like.options().dtype(at::kByte)) : at::Tensor();
}

}  // namespace brisk::onednn
