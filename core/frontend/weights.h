#pragma once
// Named weights: the parameters and buffers a model file carries, by state-dict name
// ("encoder.0.weight"), as Module::swapWeights replaces them. Each frontend reports the
// names it knows and applies replacements before it turns weights into constants, so
// every load-time fold (freeze's conv-bn fold, PT2 constant folding, packed GEMM
// weights) sees the new values.
#include <c10/core/ScalarType.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace at {
class Tensor;
}

namespace brisk {

// Needs <ATen/core/Tensor.h> wherever one is built or read; this header stays light
// because Module::load's callers include it.
using WeightMap = std::unordered_map<std::string, at::Tensor>;

struct WeightInfo {
  std::string name;
  std::vector<int64_t> sizes;
  c10::ScalarType dtype;
  bool operator==(const WeightInfo& o) const { return name == o.name && sizes == o.sizes && dtype == o.dtype; }
};

// "Float[16, 32]" (the name is said by the caller).
std::string describeWeight(const WeightInfo& w);
std::string describeTensorType(const at::Tensor& t);

// Throws brisk::Error naming `model` and the first offending weight (in name order)
// unless every replacement names a known weight and is a dense CPU tensor of its dtype and
// sizes.
void checkReplacements(const std::vector<WeightInfo>& known, const WeightMap& replacements,
                       const std::string& model);

// Dense copies of `weights`, so changing the caller's tensors later cannot change a
// loaded model.
WeightMap copyWeights(const WeightMap& weights);

}  // namespace brisk
