// The ops_quantized plugin: reduced precision, opt-in. It registers one graph pass,
// ops_quantized.reduce_precision (linear_rewrite.h), which changes nothing unless
// Options::precision asks for a mode, and the kernels of the nodes it writes
// (linear_kernels.h). Core loads this plugin when a Module asks for a precision.
#include <glog/logging.h>

#include <algorithm>

#include "core/common/options.h"
#include "core/kernels/plugin.h"
#include "ops_quantized/linear_kernels.h"
#include "ops_quantized/linear_rewrite.h"
#include "ops_quantized/precision.h"
#include "ops_quantized/rnn_int8.h"

BRISK_PLUGIN(registrar) {
  using namespace brisk::ops_quantized;
  registerLinearKernels(registrar);
  registerRnnInt8Kernels(registrar);
  registrar.pass(
      "reduce_precision", kReducePrecisionOrder,
      [](brisk::Graph& g, const brisk::PassContext& ctx) -> size_t {
        std::vector<Mode> modes = requestedModes(ctx.options, ctx.model);
        // bf16 is the onednn delegate's work (precision.h): without it, bf16 changes nothing.
        const auto& o = ctx.options;
        if (std::find(modes.begin(), modes.end(), Mode::kBf16) != modes.end() &&
            (!o.use_delegates || o.fallback_only ||
             std::find(o.delegates.begin(), o.delegates.end(), "onednn") == o.delegates.end())) {
          LOG_FIRST_N(WARNING, 1) << "brisk: " << ctx.model
                                  << ": precision bf16 runs in the onednn delegate, which this Module does not use; "
                                     "that part stays fp32";
        }
        // bf16 alone: nothing for fbgemm here.
        if (std::all_of(modes.begin(), modes.end(), [](Mode m) { return m == Mode::kBf16; })) return 0;
        if (!fbgemmRuns()) {
          LOG_FIRST_N(WARNING, 1) << "brisk: " << ctx.model
                                  << ": precision modes need AVX2, FMA and F16C (fbgemm's kernels); this CPU "
                                     "lacks one, so the model runs in fp32";
          return 0;
        }
        return reducePrecision(g, ctx, std::move(modes));
      },
      "linear layers on fp16 weights or dynamic int8, and LSTM / GRU layers in dynamic int8, as Options::precision "
      "asks (nothing when it is empty)");
}
