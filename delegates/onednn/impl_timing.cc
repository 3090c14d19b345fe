#include "delegates/onednn/impl_timing.h"

#include <chrono>
#include <limits>

#include "delegates/onednn/dnnl_runtime.h"

namespace brisk::onednn {

double timeConvolution(const dnnl::convolution_forward::primitive_desc& pd, const std::vector<dnnl_exec_arg_t>& constants,
                       const dnnl::memory::desc* other, int other_arg, int runs) {
  const dnnl::engine& eng = cpuEngine();
  // dnnl::memory(desc, engine) allocates its own buffer.
  std::vector<dnnl::memory> keep;
  std::vector<dnnl_exec_arg_t> args = constants;
  auto bind = [&](int arg, const dnnl::memory::desc& md) {
    if (md.get_size() == 0) return;
    keep.emplace_back(md, eng);
    args.push_back({arg, keep.back().get()});
  };
  bind(DNNL_ARG_SRC, pd.src_desc());
  bind(DNNL_ARG_WEIGHTS, pd.weights_desc());
  bind(DNNL_ARG_DST, pd.dst_desc());
  bind(DNNL_ARG_BIAS, pd.bias_desc());
  bind(DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc());
  if (other) bind(other_arg, *other);
  const dnnl::convolution_forward prim(pd);
  DnnlState state;
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    state.execute(prim, args.data(), static_cast<int>(args.size()));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0 && s < best) best = s;  // run 0 warms caches and oneDNN's own lazy set-up
  }
  return best;
}

}  // namespace brisk::onednn
