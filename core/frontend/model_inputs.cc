#include "core/frontend/model_inputs.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import_read.h>

#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "core/frontend/archive_check.h"
#include "core/frontend/tensor_bounds.h"
#include "core/common/error.h"
#include "core/common/file_check.h"

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

// Whether the archive's data.pkl mentions `global_line` (a GLOBAL opcode's "module\nname\n").
bool pickleNames(caffe2::serialize::PyTorchStreamReader& reader, const std::string& global_line) {
  try {
    auto [data, size] = reader.getRecord("data.pkl");
    return std::string_view(static_cast<const char*>(data.get()), size).find(global_line) != std::string_view::npos;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

ModelInputs loadInputs(const std::string& path) {
  if (std::string problem = fileProblem(path); !problem.empty())
    throw Error("inputs file '" + path + "': cannot read it: it " + problem);
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("inputs file '" + path + "': cannot open it: " + std::strerror(errno));
  // torch.save writes a zip archive; a bare pickle (0x80 = PROTO) is the legacy format
  // of _use_new_zipfile_serialization=False, which libtorch's reader does not take.
  if (f.peek() == 0x80)
    throw Error("inputs file '" + path +
                "': written in torch.save's legacy format (_use_new_zipfile_serialization=False); "
                "save it with torch.save's default zip format");
  f.close();
  // What torch::jit::pickle_load does, but reading the file through torch's FileAdapter:
  // pickle_load's in-memory VectorReader does not bound its reads, and a damaged zip
  // directory makes miniz read past the buffer (found by the inputs fuzzer under ASan).
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
  c10::IValue root;
  try {
    reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
  } catch (const std::exception& e) {
    throw Error("inputs file '" + path + "': not a torch.save inputs file: " + describeException(e));
  }
  checkSavedArchive(*reader, path);  // nesting and storage sizes, before torch's unpickler
  try {
    root = torch::jit::readArchiveAndTensors("data", /*pickle_prefix=*/"", /*tensor_prefix=*/"",
                                             /*type_resolver=*/std::nullopt, /*obj_loader=*/std::nullopt,
                                             /*device=*/std::nullopt, *reader);
  } catch (const std::exception& e) {
    std::string why = describeException(e);
    if (why.find("Only Pickle protocol 2") != std::string::npos)
      throw Error("inputs file '" + path + "': written with a pickle protocol above 2; save it with "
                  "torch.save's default pickle_protocol=2");
    // libtorch's unpickler builds no OrderedDict (it fails with an internal assert).
    if (pickleNames(*reader, "collections\nOrderedDict\n"))
      throw Error("inputs file '" + path + "': it holds a collections.OrderedDict, which libtorch cannot read; "
                  "save plain dicts: torch.save({\"args\": [...], \"kwargs\": {...}}, path)");
    throw Error("inputs file '" + path + "': not a torch.save inputs file: " + why);
  }
  if (!root.isGenericDict())
    throw Error("inputs file '" + path + "': expected a dict {\"args\": [...], \"kwargs\": {...}}");
  ModelInputs out;
  for (const auto& kv : root.toGenericDict()) {
    if (!kv.key().isString())
      throw Error("inputs file '" + path + "': expected string keys \"args\" and \"kwargs\", got a " +
                  kv.key().tagKind() + " key");
    const std::string& key = kv.key().toStringRef();
    const c10::IValue& v = kv.value();
    if (key == "args") {
      if (v.isList()) {
        for (const c10::IValue& a : v.toListRef()) out.args.push_back(a);
      } else if (v.isTuple()) {
        for (const c10::IValue& a : v.toTupleRef().elements()) out.args.push_back(a);
      } else {
        throw Error("inputs file '" + path + "': \"args\" must be a list or tuple, got " + v.tagKind());
      }
    } else if (key == "kwargs") {
      if (!v.isGenericDict())
        throw Error("inputs file '" + path + "': \"kwargs\" must be a dict, got " + v.tagKind());
      for (const auto& kw : v.toGenericDict()) {
        if (!kw.key().isString())
          throw Error("inputs file '" + path + "': \"kwargs\" keys must be strings, got a " + kw.key().tagKind());
        out.kwargs[kw.key().toStringRef()] = kw.value();
      }
    } else {
      throw Error("inputs file '" + path + "': unexpected key '" + key + "' (expected \"args\" and \"kwargs\")");
    }
  }
  // pickle_load builds storages from the pickle's sizes without checking them against
  // their records (an empty record gives a storage with no memory at all).
  for (size_t i = 0; i < out.args.size(); ++i) checkTensorsFitStorage(out.args[i], path, "args[" + std::to_string(i) + "]");
  for (const auto& [k, v] : out.kwargs) checkTensorsFitStorage(v, path, "kwargs['" + k + "']");
  return out;
}

std::string defaultInputsPath(const std::string& model_path) {
  std::string base = model_path;
  auto strip = [&](std::string_view suffix) {
    if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
      base.resize(base.size() - suffix.size());
      return true;
    }
    return false;
  };
  // A PT2 archive in the core-ATen form shares its inputs with the default export.
  if (strip(".pt2")) strip(".core");
  else strip(".pt");
  return base + ".inputs.pt";
}

namespace {

// `v` converted to `type` when it is one of the saved forms above; otherwise unchanged.
c10::IValue coerce(c10::IValue v, const c10::TypePtr& type) {
  using K = c10::TypeKind;
  c10::TypePtr t = type;
  if (t->kind() == K::OptionalType) {
    if (v.isNone()) return v;
    t = t->expectRef<c10::OptionalType>().getElementType();
  }
  if (v.isTensor()) {
    const at::Tensor& x = v.toTensor();
    if (!x.defined() || x.dim() != 0) return v;
    const bool integral = !at::isFloatingType(x.scalar_type()) && !at::isComplexType(x.scalar_type());
    if (t->kind() == K::FloatType && !at::isComplexType(x.scalar_type())) return x.item().toDouble();
    if (t->kind() == K::IntType && integral && x.scalar_type() != at::kBool) return x.item().toLong();
    if (t->kind() == K::BoolType && x.scalar_type() == at::kBool) return x.item().toBool();
    return v;
  }
  if (t->kind() != K::ListType || !v.isList() || v.isTensorList() || v.isIntList() || v.isDoubleList()) return v;
  const c10::TypePtr elem = t->expectRef<c10::ListType>().getElementType();
  const auto& items = v.toListRef();
  auto all = [&](auto pred) { return std::all_of(items.begin(), items.end(), pred); };
  if (elem->kind() == K::TensorType && all([](const c10::IValue& e) { return e.isTensor() && e.toTensor().defined(); })) {
    c10::List<at::Tensor> out;
    for (const c10::IValue& e : items) out.push_back(e.toTensor());
    return out;
  }
  if (elem->kind() == K::IntType && all([](const c10::IValue& e) { return e.isInt(); })) {
    c10::List<int64_t> out;
    for (const c10::IValue& e : items) out.push_back(e.toInt());
    return out;
  }
  if (elem->kind() == K::FloatType && all([](const c10::IValue& e) { return e.isDouble() || e.isInt(); })) {
    c10::List<double> out;
    for (const c10::IValue& e : items) out.push_back(e.toScalar().toDouble());
    return out;
  }
  return v;
}

}  // namespace

void coerceToSignature(ModelInputs& in, const Signature& signature) {
  const auto& params = signature.args();
  for (size_t i = 0; i < in.args.size() && i < params.size(); ++i) in.args[i] = coerce(std::move(in.args[i]), params[i].type);
  for (auto& [name, v] : in.kwargs)
    for (const auto& p : params)
      if (p.name == name) v = coerce(std::move(v), p.type);
}

ModelInputs cloneInputs(const ModelInputs& in) {
  ModelInputs out;
  for (const auto& a : in.args) out.args.push_back(deepClone(a));
  for (const auto& [k, v] : in.kwargs) out.kwargs[k] = deepClone(v);
  return out;
}

}  // namespace brisk
