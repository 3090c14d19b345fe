#include "core/frontend/weights.h"

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <sstream>

#include "core/common/error.h"

namespace brisk {

namespace {

std::string sizesStr(c10::IntArrayRef sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

// The first few names, so a message about an unknown name shows what the model has.
std::string knownNames(const std::vector<WeightInfo>& known) {
  std::string out;
  for (size_t i = 0; i < known.size() && i < 8; ++i) out += (i ? ", " : "") + known[i].name;
  if (known.size() > 8) out += ", ... (" + std::to_string(known.size()) + " in all)";
  return out;
}

}  // namespace

std::string describeWeight(const WeightInfo& w) {
  return w.name + " " + std::string(c10::toString(w.dtype)) + sizesStr(w.sizes);
}

std::string describeTensorType(const at::Tensor& t) {
  if (!t.defined()) return "an undefined tensor";
  std::ostringstream layout;
  if (t.layout() != at::kStrided) layout << " (" << t.layout() << " layout)";
  return std::string(c10::toString(t.scalar_type())) + sizesStr(t.sizes()) + layout.str() +
         (t.device().is_cpu() ? "" : " on " + t.device().str());
}

void checkReplacements(const std::vector<WeightInfo>& known, const WeightMap& replacements,
                       const std::string& model) {
  const Error::Where where{model, "", ""};
  if (known.empty() && !replacements.empty())
    throw Error(where, "the model has no named weights to replace (saved frozen, or built without a file)");
  // In name order, so which weight a message names does not depend on hashing.
  std::vector<const WeightMap::value_type*> sorted;
  for (const auto& kv : replacements) sorted.push_back(&kv);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (const auto* kv : sorted) {
    const std::string& name = kv->first;  // not a structured binding: clang 14 (--config=fuzz) cannot capture one
    const at::Tensor& t = kv->second;
    auto it = std::find_if(known.begin(), known.end(), [&](const WeightInfo& w) { return w.name == name; });
    if (it == known.end())
      throw Error(where, "no weight named '" + name + "' (the model's weights: " + knownNames(known) + ")");
    // A sparse (or other non-strided) tensor has no dense storage to copy: cloning one
    // to a contiguous layout throws c10::Error, so it is refused here with the others.
    if (!t.defined() || t.layout() != at::kStrided || t.scalar_type() != it->dtype ||
        t.sizes() != c10::IntArrayRef(it->sizes) || !t.device().is_cpu())
      throw Error(where, "weight '" + name + "' is " + describeWeight(*it) + ", the replacement is " +
                             describeTensorType(t));
  }
}

WeightMap copyWeights(const WeightMap& weights) {
  WeightMap out;
  for (const auto& [name, t] : weights) out.emplace(name, t.detach().clone(at::MemoryFormat::Contiguous));
  return out;
}

}  // namespace brisk
