#include "delegates/onednn/packed_weights.h"

#include "delegates/onednn/dnnl_runtime.h"

namespace brisk::onednn {

PackedWeights::PackedWeights(at::Tensor dense, const dnnl::memory::desc& plain, bool owned)
    : dense_(dense.contiguous()), owned_(owned), source_(plain, cpuEngine(), dense_.data_ptr()) {}

dnnl::memory PackedWeights::get(const dnnl::memory::desc& md) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const dnnl::memory& m : packed_)
    if (m.get_desc() == md) return m;
  dnnl::memory m(md, cpuEngine());
  dnnl::stream s(cpuEngine());
  dnnl::reorder(source_, m).execute(s, source_, m);
  s.wait();
  packed_.push_back(m);
  if (owned_ && dense_.defined()) {
    source_ = m;
    dense_ = at::Tensor();
  }
  return m;
}

size_t PackedWeights::formats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return packed_.size();
}

size_t PackedWeights::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const dnnl::memory& m : packed_) n += m.get_desc().get_size();
  return n;
}

}  // namespace brisk::onednn
