#include "ops_quantized/precision.h"

#include <algorithm>

#include "core/common/error.h"
#include "core/common/options.h"

namespace brisk::ops_quantized {

namespace {
constexpr Mode kModes[] = {Mode::kFp16Weights, Mode::kInt8Dynamic, Mode::kBf16};
}

const char* modeName(Mode m) {
  switch (m) {
    case Mode::kFp16Weights: return "fp16_weights";
    case Mode::kInt8Dynamic: return "int8_dynamic";
    case Mode::kBf16: return "bf16";
  }
  return "?";
}

std::vector<Mode> requestedModes(const Options& options, const std::string& model) {
  std::vector<Mode> out;
  for (const std::string& name : options.precision) {
    const Mode* m = std::find_if(std::begin(kModes), std::end(kModes), [&](Mode k) { return name == modeName(k); });
    if (m == std::end(kModes)) {
      std::string known;
      for (Mode k : kModes) known += std::string(known.empty() ? "" : ", ") + modeName(k);
      throw Error(Error::Where{model, "", ""}, "unknown precision '" + name + "' (known: " + known + ")");
    }
    if (std::find(out.begin(), out.end(), *m) == out.end()) out.push_back(*m);
  }
  return out;
}

}  // namespace brisk::ops_quantized
