#pragma once
// The reduced-precision modes a user asks for with Options::precision (`--precision`,
// Python `precision=`). Empty: fp32, and this plugin changes nothing.
//   fp16_weights  linear layers on weights rounded to fp16 and packed at load (fbgemm's
//                 packed-fp16 GEMM), fp32 activations and accumulation
//   int8_dynamic  linear layers on per-channel int8 weights quantized at load,
//                 activations quantized per call (fbgemm's u8 x s8 GEMM)
//   bf16          convolutions in bf16 with fp32 accumulation, through the onednn
//                 delegate (delegates/onednn: it reads this name itself; this plugin
//                 rewrites nothing for it), on CPUs with AVX512_BF16
// When several are listed, the first that can run a node takes it.
#include <string>
#include <vector>

namespace brisk {
struct Options;
}

namespace brisk::ops_quantized {

enum class Mode { kFp16Weights, kInt8Dynamic, kBf16 };

const char* modeName(Mode m);

// The modes of `options.precision`, in the user's order. Throws brisk::Error naming
// `model` for a name it does not know (the message lists the known ones).
std::vector<Mode> requestedModes(const Options& options, const std::string& model);

}  // namespace brisk::ops_quantized
