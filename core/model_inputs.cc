#include "core/model_inputs.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iterator>

#include "core/error.h"

namespace brisk {
namespace {

c10::IValue deepClone(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().clone();
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList()) out.push_back(t.clone());
    return out;
  }
  if (v.isList()) {
    auto in = v.toList();
    c10::impl::GenericList out(in.elementType());
    for (const c10::IValue& e : in) out.push_back(deepClone(e));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> elems;
    for (const auto& e : v.toTupleRef().elements()) elems.push_back(deepClone(e));
    return c10::ivalue::Tuple::create(std::move(elems));
  }
  if (v.isGenericDict()) {
    auto in = v.toGenericDict();
    c10::impl::GenericDict out(in.keyType(), in.valueType());
    for (const auto& kv : in) out.insert(kv.key(), deepClone(kv.value()));
    return out;
  }
  return v;
}

}  // namespace

ModelInputs loadInputs(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("inputs file '" + path + "': cannot open it");
  std::vector<char> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  c10::IValue root;
  try {
    root = torch::jit::pickle_load(data);
  } catch (const std::exception& e) {
    throw Error("inputs file '" + path + "': not a torch.save inputs file: " + describeException(e));
  }
  if (!root.isGenericDict())
    throw Error("inputs file '" + path + "': expected a dict {\"args\": [...], \"kwargs\": {...}}");
  ModelInputs out;
  for (const auto& kv : root.toGenericDict()) {
    const std::string& key = kv.key().toStringRef();
    if (key == "args") {
      const c10::IValue& a = kv.value();
      if (a.isList()) {
        for (const c10::IValue& v : a.toListRef()) out.args.push_back(v);
      } else if (a.isTuple()) {
        for (const c10::IValue& v : a.toTupleRef().elements()) out.args.push_back(v);
      } else {
        throw Error("inputs file '" + path + "': \"args\" must be a list or tuple");
      }
    } else if (key == "kwargs") {
      for (const auto& kw : kv.value().toGenericDict()) out.kwargs[kw.key().toStringRef()] = kw.value();
    }
  }
  return out;
}

std::string defaultInputsPath(const std::string& model_path) {
  std::string base = model_path;
  if (base.size() > 3 && base.compare(base.size() - 3, 3, ".pt") == 0) base.resize(base.size() - 3);
  return base + ".inputs.pt";
}

ModelInputs cloneInputs(const ModelInputs& in) {
  ModelInputs out;
  for (const auto& a : in.args) out.args.push_back(deepClone(a));
  for (const auto& [k, v] : in.kwargs) out.kwargs[k] = deepClone(v);
  return out;
}

}  // namespace brisk
